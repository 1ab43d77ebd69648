// `npm run test:e2e`: the shipped image and install manifests on a real local node (Linux, root;
// docs/real-node.md). Not part of `vitest run` (vitest.config.ts): it changes the host while it
// runs and takes minutes.
// The soak's 5-minute run is one of its files (test/e2e/soak.test.ts, docs/reliability.md);
// `npm run soak` runs that file alone, for as long as asked.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'e2e',
    include: ['test/e2e/**/*.test.ts'],
    // One control plane and one node for the whole run (the image is built once, in the setup).
    globalSetup: ['test/e2e/global-setup.ts'],
    // One HNC installation on one node: files run one after another, each from an installed,
    // converged HNC (test/e2e/support.ts ensureInstalled).
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
