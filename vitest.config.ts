import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // `npm run coverage`: line and branch coverage of the production code by the unit project.
    coverage: {
      provider: 'v8',
      include: ['core/**/*.ts', 'kube/**/*.ts', 'controller/**/*.ts', 'webhooks/**/*.ts', 'kubectl-plugin/**/*.ts', 'cmd/**/*.ts'],
      exclude: ['**/*.test.ts', '**/testing.ts', '**/testing/**'],
      reporter: ['text-summary', 'html'],
      reportsDirectory: 'coverage',
    },
    projects: [
      {
        test: {
          name: 'unit',
          include: [
            'core/**/*.test.ts',
            'kube/**/*.test.ts',
            'controller/**/*.test.ts',
            'webhooks/**/*.test.ts',
            'kubectl-plugin/**/*.test.ts',
            'local-cluster/**/*.test.ts',
            'deploy/**/*.test.ts',
            'scripts/**/*.test.ts',
            'bench/**/*.test.ts',
            'soak/**/*.test.ts',
            'cmd/**/*.test.ts',
            'docs/**/*.test.ts',
            'bench/**/*.test.ts',
            // The layering lint's own test (probe sources).
            'eslint.config.test.ts',
          ],
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          // One real control plane per run, shared by every integration file (isolated by namespace).
          globalSetup: ['test/integration/global-setup.ts'],
          // Files run one after another: each runs its own manager, and two managers on one
          // cluster would both reconcile every namespace.
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
