// A command run to its end with its output collected: kubectl, helm, and whatever else a test runs
// and reads. Never throws on a non-zero exit (the tests assert on the code and the texts).
import { spawn } from 'node:child_process';

export interface ProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runProcess(
  bin: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(opts.input ?? ''); // no input: at once at its end, as `< /dev/null`
  });
}

/** helm against one cluster, its cache, config and data kept under `stateDir` (not the user's home). */
export function helmIn(helmBin: string, kubeconfigPath: string, stateDir: string): (args: string[]) => Promise<ProcessResult> {
  const env = {
    ...process.env,
    HELM_CACHE_HOME: `${stateDir}/helm-cache`,
    HELM_CONFIG_HOME: `${stateDir}/helm-config`,
    HELM_DATA_HOME: `${stateDir}/helm-data`,
  };
  return (args) => runProcess(helmBin, [...args, '--kubeconfig', kubeconfigPath], { env });
}
