// A local node in a process of its own, for the crash rehearsal (node-recovery.ts): it starts a
// node on the suite's control plane, prints "ready" on stdout, and runs until it is killed.
// Argument: the JSON of CrashNodeInput.
import { LocalNode, type NodeBinaries, type NodeControlPlane } from '../../local-cluster/node/index.js';

export interface CrashNodeInput {
  cp: NodeControlPlane;
  binaries: NodeBinaries;
  images: string[];
}

const input = JSON.parse(process.argv[2] ?? '{}') as CrashNodeInput;
await LocalNode.start(input.cp, input.binaries, {
  images: input.images,
  log: (l) => process.stderr.write(l.endsWith('\n') ? l : `${l}\n`),
});
process.stdout.write('ready\n');
// Runs until killed: the point is that it never stops the node itself.
setInterval(() => undefined, 60_000);
