// `npm run soak -- --minutes N [--seed S]` (soak/run.ts): the soak alone (test/e2e/soak.test.ts,
// docs/reliability.md) on the e2e run's control plane and real node.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'soak',
    include: ['test/e2e/soak.test.ts'],
    globalSetup: ['test/e2e/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 600_000,
  },
});
