// Start-up errors through the real commands (npm start's cmd/start.ts and the image's
// cmd/manager.ts): one clear line on stderr and a non-zero exit, also with HNC_LOG_FILE set (whose
// log file must not crash the exit). No cluster is needed: these are the failures before one.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'hnc-startup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A kubeconfig naming a port nothing listens on.
const unreachable = join(dir, 'unreachable.kubeconfig');
writeFileSync(
  unreachable,
  `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: abc}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
);

function run(command: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', join(root, 'cmd', command), ...args], {
      cwd: root,
      env: { ...process.env, KUBECONFIG: '', KUBERNETES_SERVICE_HOST: '', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.on('exit', (code) => resolve({ code, stderr }));
  });
}

/** The lines a user reads: the one `hnc: ` line, and nothing that looks like a stack or a crash. */
function expectOneLine(stderr: string, pattern: RegExp): void {
  const lines = stderr.trim().split('\n');
  expect(lines.filter((l) => l.startsWith('hnc: '))).toHaveLength(1);
  expect(lines.find((l) => l.startsWith('hnc: '))).toMatch(pattern);
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toContain('sonic boom');
}

describe.each(['start.ts', 'manager.ts'])('cmd/%s start-up errors', (command) => {
  for (const logFile of [false, true]) {
    const env: Record<string, string> = logFile ? { HNC_LOG_FILE: join(dir, command, 'logs', 'hnc.log') } : {};
    const where = logFile ? ' (HNC_LOG_FILE set)' : '';

    it(`a missing kubeconfig: one line, exit 1${where}`, async () => {
      const r = await run(command, ['--kubeconfig', join(dir, 'nope.kubeconfig')], env);
      expect(r.code).toBe(1);
      expectOneLine(r.stderr, /^hnc: cannot read the kubeconfig .*nope\.kubeconfig: ENOENT/);
    }, 30_000);

    it(`an unreachable API server: one line, exit 1${where}`, async () => {
      const r = await run(command, ['--kubeconfig', unreachable], env);
      expect(r.code).toBe(1);
      expectOneLine(r.stderr, /^hnc: cannot reach the API server: .*ECONNREFUSED 127\.0\.0\.1:1/);
    }, 30_000);
  }

  it('a bad flag: one line, exit 1', async () => {
    const r = await run(command, ['--max-reconciles', 'many']);
    expect(r.code).toBe(1);
    expectOneLine(r.stderr, /^hnc: --max-reconciles must be a whole number/);
  }, 30_000);
});

describe('describeStartupError', () => {
  it('describes an API error (its code is the HTTP status, a number) with its message, never failing on it', async () => {
    const { describeStartupError } = await import('./run-hnc.js');
    const { ApiError } = await import('../kube/client.js');
    // The replace HNC v1.1.0's Opaque Secret once met: the described error, not a TypeError instead.
    const err = new ApiError('PUT', '/api/v1/namespaces/hnc-system/secrets/hnc-webhook-server-cert', 422, undefined, 'field is immutable');
    expect(typeof err.code).toBe('number');
    const line = describeStartupError(err);
    expect(line).toMatch(/^hnc: /);
    expect(line).toContain(err.message.split('\n')[0]);
  });
});
