// `kubectl hns create CHILD -n PARENT` and `kubectl hns delete CHILD -n PARENT [-a]`.
import { API_VERSION, type MetaKVP, type SubnamespaceAnchor } from '../../core/api/index.js';
import type { HncApi } from '../api.js';
import { CliError } from '../errors.js';
import type { Io } from '../io.js';
import { readHierarchy, writeHierarchy } from './hierarchy.js';

/** Go's %q for the names involved (DNS labels): a double-quoted string. */
const q = (s: string): string => JSON.stringify(s);

export function requireParent(parent: string | undefined): string {
  if (!parent) throw new CliError('Error: parent must be set via --namespace or -n');
  return parent;
}

export interface CreateFlags {
  labels?: MetaKVP[];
  annotations?: MetaKVP[];
}

export async function runCreate(api: HncApi, io: Io, child: string, parent: string | undefined, flags: CreateFlags = {}): Promise<void> {
  const p = requireParent(parent);
  const anchor: SubnamespaceAnchor = { apiVersion: API_VERSION, kind: 'SubnamespaceAnchor', metadata: { name: child, namespace: p } };
  if (flags.labels?.length || flags.annotations?.length) {
    anchor.spec = {
      ...(flags.labels?.length ? { labels: flags.labels } : {}),
      ...(flags.annotations?.length ? { annotations: flags.annotations } : {}),
    };
  }
  await api.createAnchor(anchor);
  io.out(`Successfully created ${q(child)} subnamespace anchor in ${q(p)} namespace\n`);
}

export async function runDelete(
  api: HncApi,
  io: Io,
  child: string,
  parent: string | undefined,
  allowCascadingDeletion = false,
): Promise<void> {
  const p = requireParent(parent);
  if (allowCascadingDeletion) {
    const loaded = await readHierarchy(api, child);
    if (loaded.hc.spec?.allowCascadingDeletion) {
      io.out(`Cascading deletion for '${child}' is already set to 'true'; unchanged\n`);
    } else {
      io.out(`Allowing cascading deletion on '${child}'\n`);
      await writeHierarchy(api, { ...loaded, hc: { ...loaded.hc, spec: { ...loaded.hc.spec, allowCascadingDeletion: true } } });
    }
  }
  await api.deleteAnchor(p, child);
  io.out(`Successfully deleted ${q(child)} subnamespace anchor in ${q(p)} namespace\n`);
}
