// The node flags the shipped image runs HNC with, read from the Dockerfile's ENTRYPOINT, so that
// the benchmark measures the memory and CPU a deployment has (one source of truth).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');

/** The flags between `node` and the script in the Dockerfile's ENTRYPOINT (exec form). */
export function shippedNodeFlags(dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8')): string[] {
  const line = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
  if (!line) throw new Error('the Dockerfile has no ENTRYPOINT in exec form');
  const argv = JSON.parse(line) as string[];
  if (argv[0] !== 'node') throw new Error(`the Dockerfile's ENTRYPOINT does not run node: ${line}`);
  return argv.slice(1, -1);
}

/**
 * The node flags of the benchmark's HNC process: the image's, or HNC_BENCH_NODE_FLAGS
 * (space-separated) to compare settings.
 */
export function benchNodeFlags(): string[] {
  const given = process.env.HNC_BENCH_NODE_FLAGS;
  return given !== undefined ? given.split(' ').filter(Boolean) : shippedNodeFlags();
}
