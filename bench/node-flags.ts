// The node flags and memory-allocator settings the shipped image runs HNC with, read from the
// Dockerfile (ENTRYPOINT and ENV), so that the benchmark measures the memory and CPU a deployment
// has (one source of truth).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const dockerfileText = () => readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

/** The flags between `node` and the script in the Dockerfile's ENTRYPOINT (exec form). */
export function shippedNodeFlags(dockerfile = dockerfileText()): string[] {
  const line = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
  if (!line) throw new Error('the Dockerfile has no ENTRYPOINT in exec form');
  const argv = JSON.parse(line) as string[];
  if (argv[0] !== 'node') throw new Error(`the Dockerfile's ENTRYPOINT does not run node: ${line}`);
  return argv.slice(1, -1);
}

/** The glibc allocator's settings (`ENV MALLOC_…=…`) of the image: they change the process's memory as much as a node flag. */
export function shippedNodeEnv(dockerfile = dockerfileText()): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of dockerfile.matchAll(/^ENV (MALLOC_[A-Z_]+)=(\S+)$/gm)) env[m[1]!] = m[2]!;
  return env;
}
