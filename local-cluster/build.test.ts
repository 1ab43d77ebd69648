// build.sh run twice at once must compile once, leave one complete folder, and never fail on a
// closed pipe. A stand-in `go` on PATH makes each "compile" a short sleep that writes scripts
// answering --version, so the test exercises the script's locking and renaming, not Go.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const BUILD = join(dirname(fileURLToPath(import.meta.url)), 'build.sh');

const FAKE_GO = `#!/usr/bin/env bash
set -euo pipefail
log="$FAKE_GO_LOG"
case "$1" in
  env) echo go1.25.0 ;;
  list) printf 'module k8s.io/kubernetes\\ngo 1.24.0\\nrequire k8s.io/api v0.0.0\\n' > "$FAKE_GO_DIR/k8s.mod"; echo "$FAKE_GO_DIR/k8s.mod" ;;
  mod|get) ;;
  build)
    echo "build $$" >> "$log"
    sleep 1
    out=""; pkgs=()
    shift
    while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift 2 ;; -p) shift 2 ;; -*) shift ;; *) pkgs+=("$1"); shift ;; esac; done
    write() { printf '#!/bin/sh\\necho "%s v0 (fake)"\\necho "second line"\\n' "$(basename "$1")" > "$1"; chmod +x "$1"; }
    if [ "\${out%/}" != "$out" ]; then for p in "\${pkgs[@]}"; do write "$out$(basename "$p")"; done; else write "$out"; fi ;;
  *) echo "fake go: unexpected $*" >&2; exit 1 ;;
esac
`;

function run(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [BUILD, '--print-dir'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('close', (code) => resolve({ code, out: out.trim(), err }));
  });
}

describe('local-cluster/build.sh', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('builds once when run twice at once, into one complete folder', async () => {
    const root = mkdtempSync(join(tmpdir(), 'hnc-build-test-'));
    dirs.push(root);
    const log = join(root, 'go.log');
    writeFileSync(log, '');
    const goPath = join(root, 'go');
    writeFileSync(goPath, FAKE_GO);
    chmodSync(goPath, 0o755);
    const env = {
      ...process.env,
      PATH: `${root}:${process.env.PATH}`,
      HNC_CACHE_DIR: join(root, 'cache'),
      FAKE_GO_LOG: log,
      FAKE_GO_DIR: root,
    };

    const [a, b] = await Promise.all([run(env), run(env)]);
    expect(a.code, a.err).toBe(0);
    expect(b.code, b.err).toBe(0);
    expect(a.out).toBe(b.out);
    expect(a.out).toMatch(/k8s\/v[\d.]+-etcd-v[\d.]+-go1\.25\.0$/);
    // One run compiled (two go build calls: Kubernetes, then etcd); the other waited and reused it.
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(2);
    expect(a.err + b.err).toContain('another build is running');
    // Nothing half-built is left beside the result.
    expect(readdirSync(join(root, 'cache', 'k8s')).filter((f) => !f.startsWith('.build.lock'))).toHaveLength(1);
    expect(readdirSync(a.out).sort()).toEqual(['.complete', 'etcd', 'kube-apiserver', 'kube-controller-manager', 'kubectl']);

    // A third run returns at once from the cache.
    const c = await run(env);
    expect(c.code).toBe(0);
    expect(c.out).toBe(a.out);
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(2);
  });
});
