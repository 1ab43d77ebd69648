import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'coverage/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
      // Prettier wraps code at 140 (npm run lint checks it); this catches what it leaves: comments.
      'max-len': ['error', { code: 140, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true }],
    },
  },
  {
    // Type-aware checks: an unawaited promise loses its error; a promise where a callback's
    // return is ignored (an event handler) runs unobserved.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // The pure core must not reach for I/O: keep it importable by every shell.
    files: ['core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:fs*', 'node:net', 'node:http*', 'node:child_process', 'fs', 'net', 'http', 'https', 'child_process'],
              message: 'core/ is pure: no I/O.',
            },
            {
              group: [
                '@kubernetes/client-node',
                'pino',
                '../kube/*',
                '../../kube/*',
                '../controller/*',
                '../webhooks/*',
                '../kubectl-plugin/*',
              ],
              message: 'core/ imports nothing with I/O.',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests of the pure core may read fixtures from disk (e.g. the CRD YAML under crds/).
    files: ['core/**/*.test.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    // The three shells never import each other; shared needs go down into core/ or kube/.
    files: ['controller/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/webhooks/**', '**/kubectl-plugin/**'], message: 'controller/ must not import webhooks/ or kubectl-plugin/.' },
          ],
        },
      ],
    },
  },
  {
    files: ['webhooks/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/controller/**', '**/kubectl-plugin/**'], message: 'webhooks/ must not import controller/ or kubectl-plugin/.' },
          ],
        },
      ],
    },
  },
  {
    files: ['kubectl-plugin/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/controller/**', '**/webhooks/**'], message: 'kubectl-plugin/ must not import controller/ or webhooks/.' },
          ],
        },
      ],
    },
  },
);
