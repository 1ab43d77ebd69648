// The local node (docs/real-node.md): what `npm start -- --node` and the e2e tests start.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildNodeBinaries,
  buildNodeImages,
  ensureNodePackages,
  LocalNode,
  type LocalNodeOptions,
  type NodeBinaries,
  type NodeControlPlane,
} from './node.js';

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
  kubeProxySynced,
  leftovers,
  type NodeBinaries,
  type NodeControlPlane,
  type LocalNodeOptions,
} from './node.js';
export { recoverHost } from './host.js';

export interface PreparedNode {
  binaries: NodeBinaries;
  /** Image archives to import: pause, busybox, and HNC's when asked for. */
  images: string[];
  /** Where the archives are (a temporary folder; remove it when done). */
  imageDir: string;
}

/**
 * What a node needs before it starts, all of it without a control plane: the system packages
 * (apt-get when missing), its binaries (built once), the pause and busybox images, and HNC's
 * image from the Dockerfile when `hncImage` names it.
 */
export async function prepareLocalNode(opts: { hncImage?: string; log?: (l: string) => void } = {}): Promise<PreparedNode> {
  const log = opts.log ?? ((l: string) => process.stderr.write(l));
  await ensureNodePackages(log);
  const binaries = await buildNodeBinaries(log);
  const imageDir = mkdtempSync(join(tmpdir(), 'hnc-node-images-'));
  const images = await buildNodeImages(imageDir, opts.hncImage, log);
  return { binaries, imageDir, images: [images.pause, images.busybox, ...(images.hnc ? [images.hnc] : [])] };
}

/** Prepares (prepareLocalNode) and starts a node; the control plane must have been started with `withNode: true`. */
export async function startLocalNode(cp: NodeControlPlane, opts: LocalNodeOptions & { prepared?: PreparedNode } = {}): Promise<LocalNode> {
  const log = opts.log ?? ((l: string) => process.stderr.write(l.endsWith('\n') ? l : `${l}\n`));
  const prepared = opts.prepared ?? (await prepareLocalNode({ log }));
  return LocalNode.start(cp, prepared.binaries, { ...opts, log, images: [...prepared.images, ...(opts.images ?? [])] });
}
