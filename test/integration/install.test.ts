// The install files (dist/install.yaml, dist/install-hrq.yaml) are what kustomize makes of deploy/
// and deploy/hrq/ (the kubectl built with the control plane carries kustomize), and the real API
// server accepts every object of the HRQ variant (a server-side dry-run apply: nothing is changed).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderInstall, VARIANTS, writeInstall, type Variant } from '../../scripts/build-install.js';
import { TestCluster, kubectl } from '../support/cluster.js';

let cluster: TestCluster;
let dir: string;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  dir = mkdtempSync(join(tmpdir(), 'hnc-install-test-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const objectsOf = (yaml: string) =>
  parseAllDocuments(yaml)
    .map((d) => d.toJSON() as unknown)
    .filter(Boolean);

describe('dist/install.yaml and dist/install-hrq.yaml', () => {
  for (const variant of Object.keys(VARIANTS) as Variant[]) {
    it(`${variant}: the same objects, in the same order, as kubectl kustomize`, async () => {
      const kustomized = await kubectl(cluster.kubeconfigPath, ['kustomize', join(VARIANTS[variant].kustomization, '..')]);
      expect(kustomized.stderr).toBe('');
      expect(kustomized.code).toBe(0);
      const ours = renderInstall({ kustomization: VARIANTS[variant].kustomization }).objects;
      const theirs = objectsOf(kustomized.stdout);
      expect(theirs.length).toBe(ours.length);
      // Key order differs (kustomize sorts keys); the objects and their order may not.
      expect(theirs.map((o, i) => isDeepStrictEqual(o, ours[i]))).toEqual(ours.map(() => true));
    });
  }

  it('the HRQ variant is accepted by the API server as it is (server-side dry-run apply)', async () => {
    const out = writeInstall({ variant: 'hrq', out: join(dir, 'install-hrq.yaml') }).out;
    expect(readFileSync(out, 'utf8')).toContain('--enable-hrq');
    const applied = await kubectl(cluster.kubeconfigPath, [
      'apply',
      '--server-side',
      '--dry-run=server',
      '--force-conflicts',
      '--field-manager=install-test',
      '-f',
      out,
    ]);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/deployment\.apps\/hnc-controller-manager serverside-applied \(server dry run\)/);
    expect(applied.stdout.trim().split('\n')).toHaveLength(objectsOf(readFileSync(out, 'utf8')).length);
  });
});
