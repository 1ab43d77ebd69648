// build-helm.sh run twice at once must compile once and leave one complete folder; a failed
// compile must leave nothing in the cache. A stand-in `go` on PATH makes the "compile" a short
// sleep that writes a script answering `helm version`, so the test exercises the script's
// locking, renaming and ldflags, not Go.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const BUILD = join(dirname(fileURLToPath(import.meta.url)), 'build-helm.sh');

const FAKE_GO = `#!/usr/bin/env bash
set -euo pipefail
case "$1" in
  env) echo go1.26.0 ;;
  list) printf 'module helm.sh/helm/v3\\ngo 1.26.0\\nrequire (\\n\\tk8s.io/client-go v0.37.0\\n)\\n' > "$FAKE_GO_DIR/helm.mod"
        echo "$FAKE_GO_DIR/helm.mod" ;;
  install)
    echo "install $*" >> "$FAKE_GO_LOG"
    [ -z "\${FAKE_GO_FAIL:-}" ] || { echo "fake go: compile error" >&2; exit 2; }
    sleep 1
    printf '#!/bin/sh\\necho v0-fake\\n' > "$GOBIN/helm"; chmod +x "$GOBIN/helm" ;;
  *) echo "fake go: unexpected $*" >&2; exit 1 ;;
esac
`;

function run(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [BUILD, '--print-path'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => resolve({ code, out: out.trim(), err }));
  });
}

describe('scripts/build-helm.sh', { timeout: 60_000 }, () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  function setup(extra: NodeJS.ProcessEnv = {}) {
    const root = mkdtempSync(join(tmpdir(), 'hnc-helm-build-test-'));
    dirs.push(root);
    const log = join(root, 'go.log');
    writeFileSync(log, '');
    writeFileSync(join(root, 'go'), FAKE_GO);
    chmodSync(join(root, 'go'), 0o755);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${root}:${process.env.PATH}`,
      HNC_CACHE_DIR: join(root, 'cache'),
      FAKE_GO_LOG: log,
      FAKE_GO_DIR: root,
      ...extra,
    };
    delete env.HNC_HELM;
    const installs = () => readFileSync(log, 'utf8').trim().split('\n').filter(Boolean);
    return { root, env, installs };
  }

  it('builds once when run twice at once, into one complete folder, with the version and Kubernetes version set', async () => {
    const { root, env, installs } = setup();
    const [a, b] = await Promise.all([run(env), run(env)]);
    expect(a.code, a.err).toBe(0);
    expect(b.code, b.err).toBe(0);
    expect(a.out).toBe(b.out);
    expect(a.out).toMatch(/helm\/v3\.\d+\.\d+-go1\.26\.0\/helm$/);
    expect(installs()).toHaveLength(1);
    // (Whether the second waited on the lock or started after the first finished, it reused the build.)
    // helm's Makefile's ldflags: its version, and the Kubernetes minor of the client-go it requires.
    expect(installs()[0]).toMatch(/internal\/version\.version=v3\.\d+\.\d+/);
    expect(installs()[0]).toContain('pkg/chartutil.k8sVersionMinor=37');
    expect(installs()[0]).toMatch(/helm\.sh\/helm\/v3\/cmd\/helm@v3\.\d+\.\d+/);
    expect(readdirSync(join(root, 'cache', 'helm')).filter((f) => f !== '.build.lock')).toHaveLength(1);
    expect(readdirSync(dirname(a.out)).sort()).toEqual(['.complete', 'helm']);
    // A third run returns at once from the cache.
    const c = await run(env);
    expect(c.code).toBe(0);
    expect(c.out).toBe(a.out);
    expect(installs()).toHaveLength(1);
  });

  it('builds nothing when HNC_HELM names a helm, and refuses one that is not there', async () => {
    const { root, env, installs } = setup();
    const own = join(root, 'my-helm');
    writeFileSync(own, '#!/bin/sh\n');
    chmodSync(own, 0o755);
    const given = await run({ ...env, HNC_HELM: own });
    expect(given.code, given.err).toBe(0);
    expect(given.out).toBe(own);
    expect(installs()).toEqual([]);
    const missing = await run({ ...env, HNC_HELM: join(root, 'nope') });
    expect(missing.code).not.toBe(0);
    expect(missing.err).toContain('is not an executable file');
  });

  it('leaves nothing in the cache when the compile fails, and says so', async () => {
    const { root, env } = setup({ FAKE_GO_FAIL: '1' });
    const r = await run(env);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('compiling helm failed');
    expect(r.out).toBe('');
    expect(readdirSync(join(root, 'cache', 'helm')).filter((f) => f !== '.build.lock')).toEqual([]);
  });
});
