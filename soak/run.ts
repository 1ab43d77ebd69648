// `npm run soak -- --minutes N [--seed S] [--out DIR] [--faults kind,...]`: the soak (docs/reliability.md) on the
// real node, through vitest and the e2e setup (test/e2e/soak.test.ts). Linux and root only; the
// node is shared, so wrap it: `flock /tmp/hnc-real-node.lock npm run soak -- --minutes 30`.
// --faults injects those kinds first, in that order (e.g. to reach a new one early), then seeded ones.
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '5' },
    seed: { type: 'string' },
    out: { type: 'string' },
    faults: { type: 'string', default: '' },
  },
});
const minutes = Number(values.minutes);
if (!(minutes > 0)) throw new Error(`--minutes must be a positive number, not ${values.minutes}`);
const seed = values.seed ?? String(Math.floor(Math.random() * 2 ** 31));
const out = values.out ?? `/tmp/hnc-soak-${new Date().toISOString().replace(/[:.]/g, '-')}`;
process.stderr.write(`soak: ${minutes} min, seed ${seed}; request log and figures in ${out}\n`);

const run = (cmd: string, args: string[]) =>
  spawnSync(cmd, args, {
    stdio: 'inherit',
    env: { ...process.env, SOAK_MINUTES: String(minutes), SOAK_SEED: seed, SOAK_OUT: out, SOAK_FAULTS: values.faults },
  }).status ?? 1;

const code = run('npm', ['run', 'k8s:build']) || run('npx', ['vitest', 'run', '--config', 'vitest.soak.config.ts']);
process.exit(code);
