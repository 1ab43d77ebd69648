// helm for the chart's tests and the e2e install: HNC_HELM when set, else the binary that
// build-helm.sh builds from helm's Go module (once, cached by version like the control plane).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lastLine, runScript } from '../kube/script.js';

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
  const out = await runScript(buildScript, ['--print-path'], log, (m) => new HelmError(`building helm: ${m}`));
  if (!out) throw new HelmError(`building helm: ${buildScript} printed no path`);
  return lastLine(out);
}
