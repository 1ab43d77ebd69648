// What the soak's users believe they made: each team's namespaces and parents, and every object
// they created, by uid and resourceVersion. At a quiet point it is compared with the cluster: an
// object gone or changed that no user deleted or changed is lost.
import { isNotFound, type KubeClient } from '../kube/client.js';
import type { KubeObject } from './kinds.js';

export type TrackedKind = 'source' | 'service' | 'anchor';

export interface Tracked {
  kind: TrackedKind;
  path: string;
  namespace: string;
  uid: string;
  resourceVersion: string;
  /** HNC writes the status of anchors and HierarchyConfigurations: only their uid must stay. */
  checkVersion: boolean;
}

export interface Team {
  name: string;
  root: string;
  /** Full namespaces (not subnamespaces) the lead may move: children of the root at the start. */
  movable: string[];
  /** namespace → its parent (undefined for the root), as the lead's successful requests made it. */
  parentOf: Map<string, string | undefined>;
  subnamespaces: Set<string>;
  /** Namespaces whose HierarchyConfiguration allows cascading deletion. */
  cascading: Set<string>;
  servicesHard: number;
  serial: number;
  /** When each subnamespace's anchor was created (ms). */
  createdAt: Map<string, number>;
}

export class World {
  readonly teams: Team[] = [];
  readonly tracked = new Map<string, Tracked>();
  /** Namespaces a user deleted (a subnamespace's anchor, and what was below it). */
  readonly deletedNamespaces = new Set<string>();
  /**
   * Paths (`ns/<name>` for a namespace) whose last write got no answer: done or not, nobody knows
   * until the next quiet point, where each one's resolver reads the cluster and adopts what it finds.
   */
  readonly uncertain = new Map<string, () => Promise<void>>();

  track(kind: TrackedKind, path: string, obj: KubeObject): void {
    const { uid, resourceVersion, namespace } = obj.metadata;
    const checkVersion = kind !== 'anchor';
    this.tracked.set(path, { kind, path, namespace: namespace!, uid: uid!, resourceVersion: resourceVersion!, checkVersion });
  }

  /** The team's tracked objects of a kind (optionally only those whose path holds `under`, e.g. `/roles/`). */
  owned(team: Team, kind: TrackedKind, under = ''): Tracked[] {
    return [...this.tracked.values()].filter((t) => t.kind === kind && t.path.includes(under) && this.teamOf(t.namespace) === team);
  }

  untrack(path: string): void {
    this.tracked.delete(path);
  }

  teamOf(ns: string): Team | undefined {
    return this.teams.find((t) => ns === t.root || ns.startsWith(`${t.root}-`));
  }

  namespaces(team: Team): string[] {
    return [...team.parentOf.keys()];
  }

  children(team: Team, ns: string): string[] {
    return [...team.parentOf].filter(([, p]) => p === ns).map(([c]) => c);
  }

  descendants(team: Team, ns: string): string[] {
    return this.children(team, ns).flatMap((c) => [c, ...this.descendants(team, c)]);
  }

  isAncestorOrSelf(team: Team, ancestor: string, ns: string | undefined): boolean {
    for (let n = ns; n !== undefined; n = team.parentOf.get(n)) if (n === ancestor) return true;
    return false;
  }

  /** Whether deleting this subnamespace's anchor must be refused: it has children and no cascading deletion at or above it. */
  mustRefuseDeletion(team: Team, ns: string): boolean {
    if (!this.children(team, ns).length) return false;
    for (let n: string | undefined = ns; n !== undefined; n = team.parentOf.get(n)) if (team.cascading.has(n)) return false;
    return true;
  }

  /** A user deleted a subnamespace: it and everything below it go, with their objects. */
  forgetSubtree(team: Team, ns: string): void {
    for (const n of [ns, ...this.descendants(team, ns)]) {
      team.parentOf.delete(n);
      team.subnamespaces.delete(n);
      team.cascading.delete(n);
      this.deletedNamespaces.add(n);
    }
    for (const [path, t] of this.tracked) if (this.deletedNamespaces.has(t.namespace)) this.tracked.delete(path);
  }

  /** Adopts what the cluster shows for every write that got no answer. */
  async resolveUncertain(): Promise<void> {
    // One that cannot read the cluster now stays uncertain until the next quiet point.
    for (const [path, resolve] of [...this.uncertain])
      await resolve().then(
        () => this.uncertain.delete(path),
        () => undefined,
      );
  }

  /** Users' objects gone, replaced or changed though no user did it; skips what an unanswered write may have changed. */
  async lostObjects(admin: KubeClient): Promise<string[]> {
    const lost: string[] = [];
    for (const t of this.tracked.values()) {
      if (this.uncertain.has(t.path) || this.deletedNamespaces.has(t.namespace)) continue;
      const now = await admin.get<KubeObject>(t.path).catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
      if (!now) lost.push(`${t.path}: gone`);
      else if (now.metadata.uid !== t.uid) lost.push(`${t.path}: replaced (uid ${t.uid} → ${now.metadata.uid})`);
      else if (t.checkVersion && now.metadata.resourceVersion !== t.resourceVersion)
        lost.push(`${t.path}: changed (resourceVersion ${t.resourceVersion} → ${now.metadata.resourceVersion})`);
    }
    for (const team of this.teams)
      for (const ns of this.namespaces(team)) {
        if (this.uncertain.has(`ns/${ns}`)) continue;
        const now = await admin
          .get<KubeObject>(`/api/v1/namespaces/${ns}`)
          .catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e)));
        if (!now || now.metadata.deletionTimestamp) lost.push(`namespace ${ns}: ${now ? 'being deleted' : 'gone'}`);
      }
    return lost;
  }
}
