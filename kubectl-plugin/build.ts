// Bundles the plugin into one ES module, dist/kubectl-hns.mjs, with a node shebang: `npm run
// build:plugin`. The connection is imported lazily (main.ts), so esbuild wraps it in a deferred
// initialiser and `--help` never evaluates the kube client or @kubernetes/client-node.
import { chmodSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const outfile = join(root, 'dist', 'kubectl-hns.mjs');

const result = await build({
  entryPoints: [join(root, 'kubectl-plugin', 'main.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minify: true,
  legalComments: 'eof',
  metafile: true,
  logLevel: 'warning',
  // CommonJS dependencies call require(); give the ES module one.
  banner: {
    js: '#!/usr/bin/env node\nimport { createRequire as __hnsCreateRequire } from "node:module";\nconst require = __hnsCreateRequire(import.meta.url);',
  },
  define: { __KUBECTL_HNS_VERSION__: JSON.stringify(`v${pkg.version}`) },
});
chmodSync(outfile, 0o755);
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
process.stderr.write(`wrote ${outfile} (${(bytes / 1024).toFixed(0)} KiB)\n`);
