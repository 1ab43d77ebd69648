// The local node (docs/real-node.md): what `npm start -- --node` and the e2e tests start.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalControlPlane } from '../control-plane.js';
import { buildNodeBinaries, buildNodeImages, ensureNodePackages, LocalNode, type LocalNodeOptions } from './node.js';

export {
  LocalNode,
  NodeError,
  NODE_NAME,
  NODE_IP,
  POD_CIDR,
  BRIDGE,
  PAUSE_IMAGE,
  BUSYBOX_IMAGE,
  buildNodeBinaries,
  buildNodeImages,
  ensureNodePackages,
  leftovers,
  type NodeBinaries,
  type LocalNodeOptions,
} from './node.js';

/**
 * Everything a node needs, then the node: the system packages (apt-get when missing), its
 * binaries (built once), the pause and busybox images (and HNC's when `hncImage` is given),
 * imported into its containerd. The control plane must have been started with `withNode: true`.
 */
export async function startLocalNode(cp: LocalControlPlane, opts: LocalNodeOptions & { hncImage?: string } = {}): Promise<LocalNode> {
  const log = opts.log ?? ((l: string) => process.stderr.write(l.endsWith('\n') ? l : `${l}\n`));
  await ensureNodePackages(log);
  const bins = await buildNodeBinaries(log);
  const imageDir = join(cp.stateDir, 'images');
  mkdirSync(imageDir, { recursive: true });
  const images = await buildNodeImages(imageDir, opts.hncImage, log);
  return LocalNode.start(cp, bins, {
    ...opts,
    log,
    images: [images.pause, images.busybox, ...(images.hnc ? [images.hnc] : []), ...(opts.images ?? [])],
  });
}
