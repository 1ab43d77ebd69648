// Bundles the plugin into one ES module, dist/kubectl-hns.mjs, with a node shebang: `npm run
// build:plugin`. The connection is imported lazily (main.ts), so esbuild wraps it in a deferred
// initialiser and `--help` never evaluates the kube client. What the plugin takes from
// @kubernetes/client-node (client-node.ts, for exec and auth-provider users only) is bundled
// first, on its own, and carried in the file as text, compiled only when such a user connects:
// V8 reads every function of a script before running any of it, and client-node's were three
// quarters of the file, paid by every command.
import { chmodSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
const outfile = join(root, 'dist', 'kubectl-hns.mjs');
const clientNodeEntry = join(root, 'kubectl-plugin', 'client-node.ts');

const common = { bundle: true, platform: 'node', target: 'node26', minify: true, legalComments: 'eof', logLevel: 'warning' } as const;

// client-node's part, as a CommonJS module's text (its licences at its end).
// Node's own punycode module is deprecated (a warning on every exec user's command): client-node's
// URL parser gets the userland package of the same API instead.
const deferred = await build({
  ...common,
  entryPoints: [clientNodeEntry],
  format: 'cjs',
  write: false,
  alias: { punycode: 'punycode/' },
});
const deferredText = deferred.outputFiles[0]?.text;
if (!deferredText) throw new Error(`bundling ${clientNodeEntry} gave no output`);
// The text is compiled as a CommonJS function body: a dynamic import() or import.meta in it would
// fail only when an exec or auth-provider user connects, so such a client-node fails the build.
// esbuild's warnings (e.g. "import.meta" emptied in CommonJS) fail it too.
const unsupported = /\bimport\s*\(|\bimport\.meta\b/.exec(deferredText);
if (deferred.warnings.length || unsupported)
  throw new Error(
    `bundling ${clientNodeEntry} as a deferred CommonJS text: ${
      unsupported ? `it holds "${unsupported[0]}", which compileFunction cannot run` : `${deferred.warnings.length} warning(s), see above`
    }`,
  );

/**
 * client-node.ts, and client-node itself wherever it is imported (only ever dynamically, as in
 * connection.ts and kube/client.ts), become one module that compiles that text when first
 * imported. It exports only KubeConfig: importing anything else fails the build.
 */
const deferClientNode: Plugin = {
  name: 'defer-client-node',
  setup(b) {
    b.onResolve({ filter: /^(\.\/client-node\.js|@kubernetes\/client-node)$/ }, () => ({ path: 'client-node', namespace: 'deferred' }));
    b.onLoad({ filter: /.*/, namespace: 'deferred' }, () => ({
      loader: 'js',
      resolveDir: root,
      contents: [
        'import { createRequire } from "node:module";',
        'import { compileFunction } from "node:vm";',
        'import { fileURLToPath } from "node:url";',
        'import { dirname } from "node:path";',
        'const file = fileURLToPath(import.meta.url);',
        'const cjs = { exports: {} };',
        `compileFunction(${JSON.stringify(deferredText)}, ["exports", "require", "module", "__filename", "__dirname"], { filename: file + " (client-node)" })`,
        '  (cjs.exports, createRequire(import.meta.url), cjs, file, dirname(file));',
        'export const KubeConfig = cjs.exports.KubeConfig;',
      ].join('\n'),
    }));
  },
};

const result = await build({
  ...common,
  entryPoints: [join(root, 'kubectl-plugin', 'main.ts')],
  outfile,
  format: 'esm',
  metafile: true,
  plugins: [deferClientNode],
  // CommonJS dependencies call require(); give the ES module one.
  banner: {
    js: '#!/usr/bin/env node\nimport { createRequire as __hnsCreateRequire } from "node:module";\nconst require = __hnsCreateRequire(import.meta.url);',
  },
  define: { __KUBECTL_HNS_VERSION__: JSON.stringify(`v${pkg.version}`) },
});
chmodSync(outfile, 0o755);
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
process.stderr.write(
  `wrote ${outfile} (${(bytes / 1024).toFixed(0)} KiB, ${(deferredText.length / 1024).toFixed(0)} KiB of it client-node's, compiled when used)\n`,
);
