// Plain data the renderers take. Loaders (commands/*) fill it from the cluster; renderers
// (render/*) turn it into text. Nothing here does I/O.
import type { API_VERSION } from '../core/api/index.js';
import type { Grant, Subject } from '../core/access/index.js';
import type { Preview } from '../core/preview/index.js';
import type { AnyObject } from './api.js';

/** A condition as the plugin shows it. */
export interface ConditionView {
  type: string;
  reason: string;
  message: string;
}

/** Why a namespace in a tree could not be shown. */
export type ReadProblem = 'forbidden' | 'notFound';

/** One namespace of a hierarchy tree, with its children (sorted by name). */
export interface TreeNode {
  name: string;
  /** Carries the `hnc.x-k8s.io/subnamespace-of` annotation. */
  subnamespace: boolean;
  conditions: ConditionView[];
  children: TreeNode[];
  /** Set when the namespace or its HierarchyConfiguration could not be read. */
  problem?: ReadProblem;
}

/** A child line of `describe`: a child in the HC status, an anchor in the namespace, or both. */
export interface ChildView {
  name: string;
  /** Listed in the HierarchyConfiguration's status.children. */
  isChild: boolean;
  /** `.status.status` of an anchor of that name in the namespace ("" if it has none yet); undefined if no anchor. */
  anchorState?: string;
}

/** An object found in a namespace as a propagated copy. */
export interface InheritedObject {
  kind: string;
  name: string;
  /** Value of `hnc.x-k8s.io/inherited-from`: the namespace holding the source. */
  from: string;
}

export interface InheritedObjects {
  objects: InheritedObject[];
  /** Plain notes for the parts that could not be read, e.g. "no permission to list roles in dev". */
  notes: string[];
  /** The resource types looked at (plural names), so an empty result says what it covers. */
  checked: string[];
}

export interface EventView {
  /** RFC 3339; undefined when the event carries no time. */
  lastSeen?: string;
  reason: string;
  /** `Kind:namespace/name` of the involved object. */
  object: string;
  message: string;
}

export interface DescribeView {
  namespace: string;
  /**
   * The hierarchy part; undefined when the HierarchyConfiguration could not be read (then
   * `notes` says why).
   */
  hierarchy?: {
    parent?: string;
    children: ChildView[];
    allowCascadingDeletion: boolean;
    conditions: ConditionView[];
  };
  /** Notes about parts that could not be read (permission), printed where they apply. */
  hierarchyNote?: string;
  childrenNote?: string;
  inherited: InheritedObjects;
  /** HNC's events in the namespace; undefined with `eventsNote` when they could not be listed. */
  events?: EventView[];
  eventsNote?: string;
  /** Hierarchical quotas over the namespace; undefined when none apply (or the cluster serves no HRQs). */
  quotas?: DescribeQuotas;
}

export interface ResourceStatusView {
  group: string;
  version: string;
  resource: string;
  mode?: string;
}

export interface ConfigView {
  resources: ResourceStatusView[];
  conditions: ConditionView[];
}

/** What `describe NS --object TYPE/NAME` found of that name in one namespace. */
export interface FoundObject {
  namespace: string;
  /** The object; undefined when the namespace has none of that name, or it could not be read. */
  object?: AnyObject;
  /** Set when the object could not be read (403). */
  forbidden?: boolean;
}

/** Everything `describe NS --object TYPE/NAME` weighs to say why the object is (not) in NS. */
export interface ExplainView {
  namespace: string;
  /** NS's labels, tree labels included: what the selector annotations are matched against. */
  labels: Record<string, string>;
  name: string;
  type: { group: string; resource: string; kind: string; mode: string };
  /** Same-named objects in NS's ancestors, the root first and the parent last. */
  ancestors: FoundObject[];
  /** NS's ActivitiesHalted condition (its own or AncestorHaltActivities), if it has one. */
  halted?: ConditionView;
  /** The object of that name in NS itself. */
  local: FoundObject;
  /** Plain notes on what could not be read, printed last. */
  notes: string[];
}

/** What `access` found: the namespaces looked at, the grants in them, and what could not be read. */
export interface AccessView {
  /** The subtree roots asked for (empty: every namespace the caller may read). */
  roots: string[];
  subject?: Subject;
  /** The namespaces whose RoleBindings were looked at: each root, then the rest of its subtree sorted. */
  namespaces: string[];
  /** In the order of `namespaces`, then by subject, role and binding. */
  grants: Grant[];
  notes: string[];
}

/** One HRQ as `describe` shows it: where, its name, and `<resource>: <used>/<hard>` from its status (subtree usage). */
export interface HrqView {
  namespace: string;
  name: string;
  usage: string;
}

/** `describe`'s quota part: the HRQs in the namespace, those above it, and its own usage. */
export interface DescribeQuotas {
  here: HrqView[];
  above: HrqView[];
  /** The strictest limits over the namespace (its singleton's spec.hard), when some HRQ above could not be read. */
  limits?: string;
  /** The namespace's own usage of the resources any of those HRQs limit (its singleton's status.used). */
  used?: string;
  /** What could not be read. */
  notes: string[];
}

/** One write sent with dryRun=All and the server's answer. */
export interface AdmissionCheck {
  /** e.g. "update HierarchyConfiguration service-1/hierarchy". */
  readonly request: string;
  readonly allowed: boolean;
  /** The server's message when refused (the webhook's own words). */
  readonly message?: string;
  readonly code?: number;
}

export interface Admission {
  /** False with --dry-run=client: the server was not asked. */
  readonly checked: boolean;
  readonly allowed: boolean;
  readonly checks: AdmissionCheck[];
  /** Why an answer was read differently, e.g. the cascading-deletion flag the real command sets first. */
  readonly note?: string;
}

/** What a `--dry-run` preview found (commands/preview.ts), as printed with -o json/yaml or as text (render/preview-text.ts). */
export interface PreviewReport extends Preview {
  readonly kind: 'HierarchyChangePreview';
  readonly apiVersion: typeof API_VERSION;
  /** One line: what the command would do. */
  readonly summary: string;
  readonly dryRun: 'client' | 'server';
  readonly admission: Admission;
  readonly notes: string[];
}
