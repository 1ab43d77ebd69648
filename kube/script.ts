// Runs one of the project's build scripts (the control plane's, the node's, helm's): its stderr is
// passed on as it comes, its stdout is the answer, and a failure carries the end of its stderr.
import { spawn } from 'node:child_process';

export class ScriptError extends Error {
  override name = 'ScriptError';
}

/** `bash script args...`: the trimmed stdout on exit 0; otherwise `fail(message)` is thrown. */
export function runScript(
  script: string,
  args: readonly string[],
  log: (line: string) => void,
  fail: (message: string) => Error = (m) => new ScriptError(m),
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let tail = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      const s = d.toString();
      tail = (tail + s).slice(-4000);
      log(s);
    });
    child.on('error', (err) => reject(fail(`cannot run ${script}: ${err.message}`)));
    child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(fail(`${script} failed (exit ${code}):\n${tail.trim()}`))));
  });
}

/** The last line of a script's stdout (the path it printed). */
export const lastLine = (out: string): string => out.split('\n').pop() ?? '';
