// `kubectl hns create CHILD -n PARENT` and `kubectl hns delete CHILD -n PARENT [-a]`.
import { API_VERSION, type MetaKVP, type SubnamespaceAnchor } from '../../core/api/index.js';
import type { HncApi } from '../api.js';
import { CliError } from '../errors.js';
import type { Io } from '../io.js';
import { readHierarchy, writeHierarchy } from './hierarchy.js';
import { runPreview, type DryWrite, type PreviewFlags } from './preview.js';

const NO_PREVIEW: PreviewFlags = { dryRun: 'none', output: 'text' };

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

function anchorFor(child: string, parent: string, flags: CreateFlags): SubnamespaceAnchor {
  const anchor: SubnamespaceAnchor = { apiVersion: API_VERSION, kind: 'SubnamespaceAnchor', metadata: { name: child, namespace: parent } };
  if (flags.labels?.length || flags.annotations?.length) {
    anchor.spec = {
      ...(flags.labels?.length ? { labels: flags.labels } : {}),
      ...(flags.annotations?.length ? { annotations: flags.annotations } : {}),
    };
  }
  return anchor;
}

export async function runCreate(
  api: HncApi,
  io: Io,
  child: string,
  parent: string | undefined,
  flags: CreateFlags = {},
  preview: PreviewFlags = NO_PREVIEW,
): Promise<void> {
  const p = requireParent(parent);
  const anchor = anchorFor(child, p, flags);
  if (preview.dryRun !== 'none') {
    await runPreview(api, io, preview, {
      change: { op: 'create-subnamespace', parent: p, child, labels: flags.labels ?? [], annotations: flags.annotations ?? [] },
      summary: `creating the subnamespace ${q(child)} in ${q(p)}`,
      writes: [{ request: `create SubnamespaceAnchor ${p}/${child}`, send: () => api.createAnchor(anchor, { dryRun: true }) }],
      focus: { subtrees: [], others: [p] },
    });
    return;
  }
  await api.createAnchor(anchor);
  io.out(`Successfully created ${q(child)} subnamespace anchor in ${q(p)} namespace\n`);
}

/** Our webhook's words when an anchor may not go because its subnamespace is not a leaf. */
const NOT_A_LEAF = "doesn't allow cascading deletion";

async function previewDelete(api: HncApi, io: Io, child: string, parent: string, allowCascadingDeletion: boolean, preview: PreviewFlags) {
  const writes: DryWrite[] = [];
  if (allowCascadingDeletion) {
    const loaded = await readHierarchy(api, child);
    if (!loaded.hc.spec?.allowCascadingDeletion) {
      const hc = { ...loaded.hc, spec: { ...loaded.hc.spec, allowCascadingDeletion: true } };
      writes.push({
        request: `${loaded.exists ? 'update' : 'create'} HierarchyConfiguration ${child}/hierarchy (allowCascadingDeletion)`,
        send: () => (loaded.exists ? api.replaceHierarchy(hc, { dryRun: true }) : api.createHierarchy(hc, { dryRun: true })),
      });
    }
  }
  const anchorRequest = `delete SubnamespaceAnchor ${parent}/${child}`;
  writes.push({ request: anchorRequest, send: () => api.deleteAnchor(parent, child, { dryRun: true }) });
  await runPreview(api, io, preview, {
    change: { op: 'delete-subnamespace', parent, child },
    summary: `deleting the subnamespace ${q(child)} of ${q(parent)}${allowCascadingDeletion ? ', allowing cascading deletion' : ''}`,
    writes,
    focus: { subtrees: [child], others: [parent] },
    // A dry run cannot make the server see the flag the real command writes first.
    adjust: (a) => {
      const refused = a.checks.find((c) => c.request === anchorRequest && !c.allowed);
      if (!allowCascadingDeletion || !refused?.message?.includes(NOT_A_LEAF) || writes.length < 2) return a;
      const checks = a.checks.map((c) => (c === refused ? { request: c.request, allowed: true } : c));
      return {
        ...a,
        checks,
        allowed: checks.every((c) => c.allowed),
        note: `the anchor's deletion was refused only for want of cascading deletion, which the real command allows first (${refused.message})`,
      };
    },
  });
}

export async function runDelete(
  api: HncApi,
  io: Io,
  child: string,
  parent: string | undefined,
  allowCascadingDeletion = false,
  preview: PreviewFlags = NO_PREVIEW,
): Promise<void> {
  const p = requireParent(parent);
  if (preview.dryRun !== 'none') return previewDelete(api, io, child, p, allowCascadingDeletion, preview);
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
