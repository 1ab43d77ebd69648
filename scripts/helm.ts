// helm for the chart's tests and the e2e install: HNC_HELM when set, else the binary that
// build-helm.sh builds from helm's Go module (once, cached by version like the control plane).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export class HelmError extends Error {
  override name = 'HelmError';
}

const buildScript = join(dirname(fileURLToPath(import.meta.url)), 'build-helm.sh');

/** The path of a helm binary: HNC_HELM, or build-helm.sh's build (a no-op when cached). */
export async function findHelm(log: (line: string) => void = (l) => process.stderr.write(l)): Promise<string> {
  const given = process.env.HNC_HELM;
  if (given) {
    if (!existsSync(given)) throw new HelmError(`HNC_HELM=${given}: no such file`);
    return given;
  }
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [buildScript, '--print-path'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let tail = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      const s = d.toString();
      tail = (tail + s).slice(-4000);
      log(s);
    });
    child.on('error', (err) => reject(new HelmError(`cannot run ${buildScript}: ${err.message}`)));
    child.on('close', (code) => {
      if (code === 0 && out.trim()) resolve(out.trim().split('\n').pop()!);
      else reject(new HelmError(`building helm failed (exit ${code}):\n${tail.trim()}`));
    });
  });
}
