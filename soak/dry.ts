// A dry run of the soak's users and checker, without the real node or faults, against a cluster
// where HNC already runs (e.g. `npm start -- --ephemeral`): for working on the soak itself.
// `tsx soak/dry.ts --kubeconfig PATH --state-dir DIR [--minutes N] [--seed S]`
import { mkdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { KubeClient } from '../kube/client.js';
import { mintUser } from '../local-cluster/index.js';
import { runSoak } from './soak.js';

const { values } = parseArgs({
  options: {
    kubeconfig: { type: 'string' },
    'state-dir': { type: 'string' },
    minutes: { type: 'string', default: '1' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string', default: '/tmp/hnc-soak-dry' },
  },
});
if (!values.kubeconfig || !values['state-dir']) throw new Error('--kubeconfig and --state-dir are required');
const stateDir = values['state-dir'];
mkdirSync(values.out, { recursive: true });
const f = await runSoak({
  minutes: Number(values.minutes),
  seed: Number(values.seed),
  outDir: values.out,
  admin: await KubeClient.fromKubeconfig(values.kubeconfig),
  userClient: async (name) => KubeClient.fromKubeconfig((await mintUser(stateDir, name)).kubeconfigPath),
  log: (l) => process.stderr.write(`${l}\n`),
});
process.exit(f.objectsLost || f.divergentQuietPoints || f.overAdmissions ? 1 : 0);
