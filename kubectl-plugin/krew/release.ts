// The krew release step: packs the built bundle for krew and fills the manifest template.
//
//   npm run build:plugin
//   npx tsx kubectl-plugin/krew/release.ts --base-url https://github.com/OWNER/REPO/releases/download/v0.1.0 \
//     [--homepage https://github.com/OWNER/REPO]   (defaults to the repository of a GitHub release URL)
//
// writes dist/krew/kubectl-hns-<version>.tar.gz (kubectl-hns.mjs, executable) and dist/krew/hns.yaml,
// the manifest with its version, URI and sha256 filled in. Upload the archive to the base URL,
// then publish hns.yaml (a custom krew index, or `kubectl krew install --manifest-url`).
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { fillManifest, tarGz } from './package.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');

const { values: args } = parseArgs({ options: { 'base-url': { type: 'string' }, homepage: { type: 'string' } } });
const baseUrl = args['base-url']?.replace(/\/+$/, '');
if (!baseUrl) {
  process.stderr.write('usage: npx tsx kubectl-plugin/krew/release.ts --base-url https://... [--homepage https://...]\n');
  process.exit(2);
}

// A GitHub release URL names the repository, the natural homepage; elsewhere, say it.
const homepage = args.homepage ?? /^https:\/\/github\.com\/[^/]+\/[^/]+(?=\/releases\/)/.exec(baseUrl)?.[0];
if (!homepage) {
  process.stderr.write('--homepage is needed when --base-url is not a GitHub release URL\n');
  process.exit(2);
}

const version = `v${(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version}`;
const bundlePath = join(root, 'dist', 'kubectl-hns.mjs');
let bundle: Buffer;
try {
  bundle = readFileSync(bundlePath);
} catch {
  process.stderr.write(`${bundlePath} is missing: run \`npm run build:plugin\` first\n`);
  process.exit(1);
}
if (!bundle.includes(`"${version}"`)) {
  process.stderr.write(`${bundlePath} was not built from version ${version}: run \`npm run build:plugin\` again\n`);
  process.exit(1);
}

const archiveName = `kubectl-hns-${version}.tar.gz`;
const archive = tarGz([{ name: 'kubectl-hns.mjs', mode: 0o755, content: bundle }]);
const sha256 = createHash('sha256').update(archive).digest('hex');
const manifest = fillManifest(readFileSync(join(here, 'hns.yaml'), 'utf8'), {
  version,
  homepage,
  uri: `${baseUrl}/${archiveName}`,
  sha256,
});

const out = join(root, 'dist', 'krew');
mkdirSync(out, { recursive: true });
writeFileSync(join(out, archiveName), archive);
writeFileSync(join(out, 'hns.yaml'), manifest);
process.stdout.write(
  [
    `wrote ${join(out, archiveName)} (sha256 ${sha256})`,
    `wrote ${join(out, 'hns.yaml')}`,
    `next: upload ${archiveName} to ${baseUrl}/, then try it:`,
    `  kubectl krew install --manifest=${join(out, 'hns.yaml')} --archive=${join(out, archiveName)}`,
    '',
  ].join('\n'),
);
