// The canonical form of a propagated copy (docs/behaviour.md §5.6), the comparison that decides whether an
// existing copy must be rewritten, and when a rewrite must be a delete-and-create.
//
// A copy holds everything of its source except `status` and `metadata`; of the metadata only the
// name, labels and annotations, minus:
// * every key whose prefix (the text before the first "/") ends with `hnc.x-k8s.io` (tree labels,
//   HNC's own keys, the selector annotations);
// * the keys an administrator lists as never copied (HNC's --unpropagated-label/annotation, and
//   DEFAULT_NEVER_COPIED_KEYS below, which keep GitOps tools from claiming copies).
// `app.kubernetes.io/managed-by` is forced to `hnc.x-k8s.io`, and the label
// `hnc.x-k8s.io/inherited-from` names the source's namespace: its presence is what makes an object
// a copy, and the controller updates or deletes nothing without it.
import { GROUP, Label, MANAGED_BY_VALUE, RBAC_GROUP } from '../api/constants.js';
import type { ObjectMeta } from '../api/types.js';
import { jsonEqual, stableJson } from '../util/equal.js';
import { deepFreeze } from '../util/freeze.js';

/** Any namespaced Kubernetes object as JSON. Only the fields propagation reads are typed. */
export interface PropagatableObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta & { ownerReferences?: unknown[]; managedFields?: unknown[]; generateName?: string };
}

type Json = Record<string, unknown>;

/** The group and kind of a propagated type; the group is '' for the core API. */
export interface TypeRef {
  readonly group: string;
  readonly kind: string;
}

/**
 * Keys never copied by default, as labels or annotations, with why. Each one is how a deployment
 * tool recognises the objects it manages; on a copy it would make the tool treat the copy as its
 * own: prune it (HNC recreates it, and the two fight forever), report drift, or adopt it.
 */
export const DEFAULT_NEVER_COPIED_KEYS: readonly { readonly key: string; readonly reason: string }[] = [
  {
    key: 'app.kubernetes.io/instance',
    reason:
      "Argo CD's default tracking label (label tracking, the default before Argo CD 3.0): a copy carrying it belongs to the Application, which prunes it or shows it OutOfSync. Helm charts also set it; a copy needs neither meaning.",
  },
  {
    key: 'argocd.argoproj.io/instance',
    reason:
      "The tracking label Argo CD's documentation suggests instead of app.kubernetes.io/instance (application.instanceLabelKey); same effect.",
  },
  {
    key: 'argocd.argoproj.io/tracking-id',
    reason:
      "Argo CD's tracking annotation (annotation tracking, the default since Argo CD 3.0): names the Application that owns the object.",
  },
  {
    key: 'kustomize.toolkit.fluxcd.io/name',
    reason:
      "Flux kustomize-controller's ownership label: objects carrying it are taken as the Kustomization's, and Flux has pruned objects that merely copied it (fluxcd/kustomize-controller#192, #410).",
  },
  { key: 'kustomize.toolkit.fluxcd.io/namespace', reason: 'The other half of the Flux Kustomization ownership label pair.' },
  {
    key: 'kustomize.toolkit.fluxcd.io/checksum',
    reason: 'Annotation older Flux versions used, with the labels above, to decide which objects to garbage-collect.',
  },
  { key: 'helm.toolkit.fluxcd.io/name', reason: "Flux helm-controller's ownership label: ties the object to a HelmRelease." },
  { key: 'helm.toolkit.fluxcd.io/namespace', reason: 'The other half of the Flux HelmRelease ownership label pair.' },
  {
    key: 'meta.helm.sh/release-name',
    reason:
      "Helm's ownership annotation: Helm adopts and overwrites an existing object whose release annotations match, so a copy must not claim the source's release.",
  },
  { key: 'meta.helm.sh/release-namespace', reason: "The other half of Helm's ownership annotation pair." },
  {
    key: 'kapp.k14s.io/app',
    reason: "Carvel kapp finds an app's objects by this label across all namespaces, and deletes those not in its configuration.",
  },
  { key: 'kapp.k14s.io/association', reason: "kapp's per-resource association label, used with kapp.k14s.io/app." },
  {
    key: 'kubectl.kubernetes.io/last-applied-configuration',
    reason:
      "Records what a client applied to the source (with the source's namespace). On a copy it is false, and kubectl apply or an Argo CD diff would compute three-way merges against a configuration never applied to it.",
  },
];

/** Matches metadata keys: exact keys, or `prefix/*` for every key under a prefix. */
export class KeySet {
  private readonly exact = new Set<string>();
  private readonly prefixes: string[] = [];

  constructor(keys: Iterable<string> = []) {
    for (const k of keys) {
      if (k.endsWith('/*')) this.prefixes.push(k.slice(0, -1));
      else this.exact.add(k);
    }
  }

  has(key: string): boolean {
    return this.exact.has(key) || this.prefixes.some((p) => key.startsWith(p));
  }
}

/** Which labels and annotations of a source are not copied, beyond HNC's own keys. */
export interface CopyPolicy {
  readonly labels: KeySet;
  readonly annotations: KeySet;
}

export interface CopyPolicyOptions {
  /** Keys never copied, as labels or annotations (exact or `prefix/*`). Default: DEFAULT_NEVER_COPIED_KEYS. */
  neverCopied?: readonly string[];
  /** HNC's --unpropagated-label: label keys not copied. */
  unpropagatedLabels?: readonly string[];
  /** HNC's --unpropagated-annotation: annotation keys not copied. */
  unpropagatedAnnotations?: readonly string[];
}

export function copyPolicy(opts: CopyPolicyOptions = {}): CopyPolicy {
  const never = opts.neverCopied ?? DEFAULT_NEVER_COPIED_KEYS.map((k) => k.key);
  return {
    labels: new KeySet([...never, ...(opts.unpropagatedLabels ?? [])]),
    annotations: new KeySet([...never, ...(opts.unpropagatedAnnotations ?? [])]),
  };
}

export const DEFAULT_COPY_POLICY: CopyPolicy = copyPolicy();

/** HNC's own keys: the prefix (text before the first "/", or the whole key) ends with the group. */
export function isHncKey(key: string): boolean {
  const slash = key.indexOf('/');
  return (slash < 0 ? key : key.slice(0, slash)).endsWith(GROUP);
}

/** True if the object is a copy made by HNC (it carries the inherited-from label, any value). */
export function isCopy(obj: PropagatableObject): boolean {
  return obj.metadata?.labels?.[Label.inheritedFrom] !== undefined;
}

/** The source namespace a copy names, or undefined for a source. */
export function inheritedFrom(obj: PropagatableObject): string | undefined {
  return obj.metadata?.labels?.[Label.inheritedFrom];
}

function filtered(map: Readonly<Record<string, string>> | undefined, drop: (k: string) => boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(map ?? {})) if (!drop(k)) out[k] = v;
  return out;
}

const nonEmpty = (m: Record<string, string>): Record<string, string> | undefined => (Object.keys(m).length > 0 ? m : undefined);

/** Everything but metadata and status (shared with the object: read it, never change it). */
function body(obj: PropagatableObject): Json {
  const { metadata: _metadata, status: _status, ...rest } = obj as Json;
  return rest;
}

/** A source's share of every copy made from it: the same in each destination but for its namespace. */
interface CopyTemplate {
  readonly body: Json;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>> | undefined;
  /** canonical() of any copy made from it (the destination and inherited-from are not part of it). */
  canonical?: Json;
  /** stableJson(canonical), compared with slim copies' text. */
  canonicalText?: string;
  /** Existing (frozen, cached) copies known to equal copies made from it: not compared again. */
  current?: WeakSet<object>;
  /** A copy's labels by the source's namespace they name (the same in every copy of it). */
  copyLabels?: Map<string, Readonly<Record<string, string>>>;
}

/**
 * Templates of sources that cannot change (the watch cache freezes what it holds; a new version is
 * a new object): propagating one source to N namespaces prepares it once, not N times.
 */
const templates = new WeakMap<object, WeakMap<CopyPolicy, CopyTemplate>>();

function copyTemplate(source: PropagatableObject, policy: CopyPolicy): CopyTemplate {
  const cacheable = Object.isFrozen(source);
  const cached = cacheable ? templates.get(source)?.get(policy) : undefined;
  if (cached) return cached;
  const meta = source.metadata ?? {};
  const labels = filtered(meta.labels, isHncKey);
  labels[Label.appManagedBy] = MANAGED_BY_VALUE;
  for (const k of Object.keys(labels)) if (policy.labels.has(k)) delete labels[k];
  const annotations = nonEmpty(filtered(meta.annotations, (k) => isHncKey(k) || policy.annotations.has(k)));
  const template: CopyTemplate = {
    body: deepFreeze(structuredClone(body(source))),
    labels: Object.freeze(labels),
    annotations: annotations && Object.freeze(annotations),
  };
  if (cacheable) {
    let byPolicy = templates.get(source);
    if (!byPolicy) templates.set(source, (byPolicy = new WeakMap()));
    byPolicy.set(policy, template);
  }
  return template;
}

/**
 * The copy of `source` that belongs in namespace `namespace`: what the controller creates, and what
 * an existing copy is compared with. Frozen, and it shares its content with other copies of the
 * same source: clone it to change it.
 */
export function desiredCopy(
  source: PropagatableObject,
  sourceNamespace: string,
  namespace: string,
  policy: CopyPolicy = DEFAULT_COPY_POLICY,
): PropagatableObject {
  const t = copyTemplate(source, policy);
  t.copyLabels ??= new Map();
  let labels = t.copyLabels.get(sourceNamespace);
  if (!labels) t.copyLabels.set(sourceNamespace, (labels = Object.freeze({ ...t.labels, [Label.inheritedFrom]: sourceNamespace })));
  const metadata = Object.freeze({ name: source.metadata?.name, namespace, labels, ...(t.annotations && { annotations: t.annotations }) });
  return Object.freeze({ ...t.body, metadata }) as PropagatableObject;
}

/**
 * The part of a copy that matters: name, non-HNC labels and annotations, and every field but
 * metadata and status. apiVersion and kind are left out: both sides are of one type by
 * construction, and objects from list calls may lack them. Server-set metadata (uid,
 * resourceVersion, managedFields, timestamps, generation, ownerReferences, finalizers, namespace)
 * is ignored.
 */
export function canonical(obj: PropagatableObject): Json {
  const text = (obj as Slim)[CANONICAL_TEXT];
  if (text !== undefined) return JSON.parse(text) as Json;
  const { apiVersion: _apiVersion, kind: _kind, ...rest } = body(obj);
  const meta = obj.metadata ?? {};
  const labels = nonEmpty(filtered(meta.labels, isHncKey));
  const annotations = nonEmpty(filtered(meta.annotations, isHncKey));
  return { ...rest, metadata: { name: meta.name, ...(labels && { labels }), ...(annotations && { annotations }) } };
}

/** Where a slim copy keeps its canonical form, as stable JSON text (never serialized: a symbol). */
const CANONICAL_TEXT = Symbol('hnc-canonical-text');
type Slim = PropagatableObject & { [CANONICAL_TEXT]?: string };

/** The fields of a copy that updatedCopy and needsRecreate read, beside its metadata. */
const SLIM_KEPT_FIELDS = ['roleRef', 'type', 'status'] as const;

/**
 * Shares values that repeat across copies: names, apiVersions, label maps, roleRefs, and above all
 * the canonical text, which every copy of one source has in common (50,000 copies of 12 sources
 * hold 12 texts, not 50,000). Bounded: when full it starts afresh (values already shared stay so).
 */
export class InternPool {
  private values = new Map<string, unknown>();
  constructor(private readonly max = 50_000) {}

  string(s: string): string;
  string(s: string | undefined): string | undefined;
  string(s: string | undefined): string | undefined {
    return s === undefined ? undefined : (this.intern(`s${s}`, s) as string);
  }

  /** A frozen JSON value equal to `v`, shared with every other equal one. */
  json<T>(v: T): T {
    return v === undefined || v === null || typeof v !== 'object' ? v : (this.intern(`j${stableJson(v)}`, v) as T);
  }

  get size(): number {
    return this.values.size;
  }

  private intern(key: string, v: unknown): unknown {
    const have = this.values.get(key);
    if (have !== undefined) return have;
    if (this.values.size >= this.max) this.values = new Map();
    if (typeof v === 'object' && v !== null) deepFreeze(v);
    this.values.set(key, v);
    return v;
  }
}

/**
 * A copy as the propagation cache keeps it: its metadata (identity, labels, annotations, what
 * others hold on it), status, the fields an update or recreate decision reads, and the rest only
 * as canonical JSON text; with a pool, what repeats across copies is shared. Copies are most of
 * what HNC caches (one per object per descendant). Sources, users' objects and immutable
 * ConfigMaps/Secrets (their data decides a recreate) are returned as they are.
 */
export function slimCopy(obj: PropagatableObject, pool?: InternPool): PropagatableObject {
  if (!isCopy(obj) || (obj as Json).immutable === true || (obj as Slim)[CANONICAL_TEXT] !== undefined) return obj;
  const str = (v: string | undefined) => (pool ? pool.string(v) : v);
  const json = <T>(v: T): T => (pool ? pool.json(v) : v);
  const m = obj.metadata ?? {};
  const metadata: Json = {
    name: str(m.name),
    namespace: str(m.namespace),
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    labels: json(m.labels),
  };
  if (m.annotations !== undefined) metadata.annotations = json(m.annotations);
  for (const k of ['deletionTimestamp', 'finalizers', 'ownerReferences'] as const) if (m[k] !== undefined) metadata[k] = m[k];
  const slim: Json & Slim = { apiVersion: str(obj.apiVersion), kind: str(obj.kind), metadata };
  for (const f of SLIM_KEPT_FIELDS) if ((obj as Json)[f] !== undefined) slim[f] = json((obj as Json)[f]);
  slim[CANONICAL_TEXT] = str(stableJson(canonical(obj)));
  return slim as PropagatableObject;
}

/**
 * Whether an existing copy already is the desired one, so that it must not be rewritten: same
 * canonical form and same inherited-from namespace.
 */
export function equalCopy(existing: PropagatableObject, desired: PropagatableObject): boolean {
  if (inheritedFrom(existing) !== inheritedFrom(desired)) return false;
  const text = (existing as Slim)[CANONICAL_TEXT];
  if (text !== undefined) return text === stableJson(canonical(desired));
  return jsonEqual(canonical(existing), canonical(desired));
}

/**
 * Whether an existing copy already is the copy of `source` (from `sourceNamespace`): equalCopy
 * without making the desired copy. For cached objects the answer is remembered, so re-planning a
 * namespace whose copies are current compares nothing.
 */
export function isCurrentCopy(
  existing: PropagatableObject,
  source: PropagatableObject,
  sourceNamespace: string,
  policy: CopyPolicy = DEFAULT_COPY_POLICY,
): boolean {
  if (inheritedFrom(existing) !== sourceNamespace) return false;
  const t = copyTemplate(source, policy);
  if (t.current?.has(existing)) return true;
  t.canonical ??= canonical({
    ...t.body,
    metadata: { name: source.metadata?.name, labels: t.labels, ...(t.annotations && { annotations: t.annotations }) },
  } as PropagatableObject);
  const text = (existing as Slim)[CANONICAL_TEXT];
  const equal = text !== undefined ? text === (t.canonicalText ??= stableJson(t.canonical)) : hasCanonical(existing, t.canonical);
  if (equal && Object.isFrozen(existing)) (t.current ??= new WeakSet()).add(existing);
  return equal;
}

/**
 * jsonEqual(canonical(obj), c) without building canonical(obj): a preview compares tens of
 * thousands of listed copies with their sources' canonical form.
 */
function hasCanonical(obj: PropagatableObject, c: Json): boolean {
  const o = obj as Json;
  let fields = 0;
  for (const k of Object.keys(o)) {
    if (k === 'metadata' || k === 'status' || k === 'apiVersion' || k === 'kind' || o[k] === undefined) continue;
    fields++;
    if (!Object.hasOwn(c, k) || !jsonEqual(o[k], c[k])) return false;
  }
  for (const k of Object.keys(c)) if (k !== 'metadata' && c[k] !== undefined) fields--;
  if (fields !== 0) return false;
  const meta = obj.metadata ?? {};
  const cm = (c.metadata ?? {}) as { name?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  return meta.name === cm.name && sameNonHnc(meta.labels, cm.labels) && sameNonHnc(meta.annotations, cm.annotations);
}

/** Whether the non-HNC keys of `map` are exactly `want` (a canonical form's filtered, non-empty map, or undefined). */
function sameNonHnc(map: Readonly<Record<string, string>> | undefined, want: Readonly<Record<string, string>> | undefined): boolean {
  let n = 0;
  for (const k of Object.keys(map ?? {})) {
    const v = map![k];
    if (v === undefined || isHncKey(k)) continue;
    n++;
    if (want?.[k] !== v || !Object.hasOwn(want, k)) return false;
  }
  for (const k of Object.keys(want ?? {})) if (want![k] !== undefined) n--;
  return n === 0;
}

/**
 * Whether turning `existing` into `desired` needs a delete and a create because an update would
 * be refused as changing an immutable field: a RoleBinding's roleRef, a Secret's type, or the
 * content of a ConfigMap or Secret marked `immutable: true`.
 */
export function needsRecreate(existing: PropagatableObject, desired: PropagatableObject, type: TypeRef): boolean {
  const a = existing as Json;
  const b = desired as Json;
  if (type.group === RBAC_GROUP && type.kind === 'RoleBinding') return !jsonEqual(a.roleRef, b.roleRef);
  if (type.group === '' && (type.kind === 'Secret' || type.kind === 'ConfigMap')) {
    if (type.kind === 'Secret' && (a.type ?? 'Opaque') !== (b.type ?? 'Opaque')) return true;
    if (a.immutable === true) {
      return ['data', 'binaryData', 'immutable'].some((f) => !jsonEqual(a[f] ?? emptyFor(f), b[f] ?? emptyFor(f)));
    }
  }
  return false;
}

const emptyFor = (field: string): unknown => (field === 'immutable' ? false : {});

/**
 * The object to send to replace `existing` by `desired` (an update): the desired copy, with the
 * existing resourceVersion (optimistic concurrency) and the metadata and status other parties may
 * hold on a copy (finalizers, ownerReferences, status), which are not HNC's to drop. The object
 * and its metadata are its own; below them it shares the desired copy's frozen content (it is only
 * ever serialized: a deep clone per copy was the largest cost of planning an update).
 */
export function updatedCopy(existing: PropagatableObject, desired: PropagatableObject): PropagatableObject {
  const old = existing.metadata ?? {};
  const out = { ...(desired as Json) } as Json & PropagatableObject;
  out.metadata = {
    ...desired.metadata,
    ...(old.resourceVersion !== undefined && { resourceVersion: old.resourceVersion }),
    ...(old.finalizers?.length && { finalizers: [...old.finalizers] }),
    ...(old.ownerReferences?.length && { ownerReferences: structuredClone(old.ownerReferences) }),
  };
  const status = (existing as Json).status;
  if (status !== undefined) out.status = structuredClone(status);
  return out;
}
