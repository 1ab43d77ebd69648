// The users at work: a team lead per team, with a client certificate of their own and admin of
// their team's root (a RoleBinding HNC propagates down the tree), and the cluster admin. Each
// step is one request, chosen by the seeded PRNG, logged with its answer; the world model
// follows every answered write, and a write without an answer is marked uncertain.
import type { KubeClient } from '../kube/client.js';
import { SOURCE_KINDS, hncObject, serviceCollection, type KubeObject, type SourceKind } from './kinds.js';
import { TREE_SUFFIX } from './expected.js';
import type { Prng } from './prng.js';
import type { Outcome, Refusal, RequestLog } from './requests.js';
import type { Team, World } from './world.js';

const HNC = '/apis/hnc.x-k8s.io/v1alpha2';
const MAX_NAMESPACES = 9;

/** Refusals by rule: whether the user's own view says the rule applied (right) or not (questionable). */
export interface Judged {
  right: number;
  questionable: Array<{ op: string; message: string }>;
}

export class Lead {
  private rev = 0;

  constructor(
    readonly user: string,
    private readonly client: KubeClient,
    private readonly team: Team,
    private readonly world: World,
    private readonly prng: Prng,
    private readonly log: RequestLog,
    private readonly judged: Judged,
  ) {}

  async step(): Promise<void> {
    const action = this.prng.weighted({
      createSource: 30,
      updateSource: 15,
      deleteSource: 8,
      createSubnamespace: 8,
      deleteSubnamespace: 5,
      setCascading: 4,
      move: 6,
      createService: 8,
      deleteService: 5,
    });
    await this[action]();
  }

  private async call<T>(op: string, target: string, fn: () => Promise<T>): Promise<Outcome<T>> {
    const r = await this.log.call(this.user, op, target, fn);
    if (!r.ok && r.refusal.kind === 'rbac') this.judgeRbac(op, target, r.refusal);
    return r;
  }

  /** The lead's rights in a subnamespace come from HNC's copy of their RoleBinding: right to be missing in its first 30 s only. */
  private judgeRbac(op: string, target: string, refusal: Refusal): void {
    const ns = /\/namespaces\/([^/]+)/.exec(target)?.[1];
    const born = ns ? this.team.createdAt.get(ns) : undefined;
    if (born !== undefined && Date.now() - born < 30_000) this.judged.right++;
    else this.judged.questionable.push({ op, message: refusal.message });
  }

  /** Records a refusal by an HNC rule or a quota as right when `holds` (the user's view agrees), else questionable. */
  private judge(op: string, refusal: Refusal, rule: RegExp, holds: boolean): void {
    if (refusal.kind !== 'hnc-rule' && refusal.kind !== 'quota') return;
    if (rule.test(refusal.message) && holds) this.judged.right++;
    else this.judged.questionable.push({ op, message: refusal.message });
  }

  private namespace(): string {
    return this.prng.pick(this.world.namespaces(this.team));
  }

  private annotations(): Record<string, string> {
    const ns = this.namespace();
    const not = this.prng.chance(0.5) ? '!' : '';
    switch (this.prng.weighted({ plain: 50, select: 15, treeSelect: 15, none: 10, all: 10 })) {
      case 'select':
        return { 'propagate.hnc.x-k8s.io/select': `${not}${ns}${TREE_SUFFIX}` };
      case 'treeSelect':
        return { 'propagate.hnc.x-k8s.io/treeSelect': `${not}${ns}` };
      case 'none':
        return { 'propagate.hnc.x-k8s.io/none': 'true' };
      case 'all':
        return { 'propagate.hnc.x-k8s.io/all': 'true' };
      default:
        return {};
    }
  }

  async createSource(): Promise<void> {
    const kind = this.prng.pick(SOURCE_KINDS);
    const ns = this.namespace();
    const name = this.prng.pick(kind.names);
    const path = `${kind.collection(ns)}/${name}`;
    const r = await this.call(`create ${kind.resource}`, path, () =>
      this.client.create<KubeObject>(kind.collection(ns), kind.make(name, ++this.rev, this.annotations())),
    );
    if (r.ok) return this.world.track('source', path, r.value);
    if (r.refusal.kind === 'apiserver-unavailable') return this.uncertainSource(path);
    const below = this.world.descendants(this.team, ns);
    const clash = this.world
      .owned(this.team, 'source', `/${kind.resource}/`)
      .some((t) => below.includes(t.namespace) && t.path.endsWith(`/${name}`));
    this.judge('create source', r.refusal, /would overwrite objects in the following descendant/, clash);
  }

  async updateSource(): Promise<void> {
    const kind = this.prng.pick(SOURCE_KINDS);
    const owned = this.world.owned(this.team, 'source', `/${kind.resource}/`);
    if (!owned.length) return this.createSource();
    const { path } = this.prng.pick(owned);
    const current = await this.call(`get ${kind.resource}`, path, () => this.client.get<KubeObject>(path));
    if (!current.ok) return;
    const next = this.withAnnotations(kind.change(current.value, ++this.rev), kind);
    const r = await this.call(`update ${kind.resource}`, path, () => this.client.replace<KubeObject>(path, next));
    if (r.ok) this.world.track('source', path, r.value);
    else if (r.refusal.kind === 'apiserver-unavailable') this.uncertainSource(path);
    else this.judge('update source', r.refusal, /would overwrite objects in the following descendant/, true);
  }

  /** Now and then a different selector annotation on an update (at most one set at a time). */
  private withAnnotations(obj: KubeObject, _kind: SourceKind): KubeObject {
    if (!this.prng.chance(0.3)) return obj;
    const kept = Object.entries(obj.metadata.annotations ?? {}).filter(([k]) => !k.startsWith('propagate.hnc.x-k8s.io/'));
    return { ...obj, metadata: { ...obj.metadata, annotations: { ...Object.fromEntries(kept), ...this.annotations() } } };
  }

  async deleteSource(): Promise<void> {
    const owned = this.world.owned(this.team, 'source');
    if (!owned.length) return;
    const { path } = this.prng.pick(owned);
    const r = await this.call('delete source', path, () => this.client.delete(path));
    if (r.ok || r.refusal.code === 404) this.world.untrack(path);
    else if (r.refusal.kind === 'apiserver-unavailable') this.uncertainSource(path);
  }

  private uncertainSource(path: string): void {
    this.world.uncertain.set(path, async () => {
      const now = await this.client.get<KubeObject>(path).catch(() => undefined);
      if (now && !now.metadata.labels?.['hnc.x-k8s.io/inherited-from']) this.world.track('source', path, now);
      else this.world.untrack(path);
    });
  }

  async createSubnamespace(): Promise<void> {
    if (this.world.namespaces(this.team).length >= MAX_NAMESPACES) return this.deleteSubnamespace();
    const parent = this.namespace();
    const name = `${this.team.root}-s${++this.team.serial}`;
    const path = `${HNC}/namespaces/${parent}/subnamespaceanchors/${name}`;
    const r = await this.call('create subnamespace', path, () =>
      this.client.create<KubeObject>(`${HNC}/namespaces/${parent}/subnamespaceanchors`, hncObject('SubnamespaceAnchor', name)),
    );
    if (r.ok) {
      this.team.parentOf.set(name, parent);
      this.team.subnamespaces.add(name);
      this.team.createdAt.set(name, Date.now());
      this.world.track('anchor', path, r.value);
    } else if (r.refusal.kind === 'apiserver-unavailable') {
      this.world.uncertain.set(`ns/${name}`, async () => {
        const anchor = await this.client.get<KubeObject>(path).catch(() => undefined);
        if (!anchor) return;
        this.team.parentOf.set(name, parent);
        this.team.subnamespaces.add(name);
        this.world.track('anchor', path, anchor);
      });
    } else this.judge('create subnamespace', r.refusal, /^$/, false);
  }

  async deleteSubnamespace(): Promise<void> {
    const subs = [...this.team.subnamespaces];
    if (!subs.length) return;
    const ns = this.prng.pick(subs);
    const parent = this.team.parentOf.get(ns)!;
    const path = `${HNC}/namespaces/${parent}/subnamespaceanchors/${ns}`;
    const mustRefuse = this.world.mustRefuseDeletion(this.team, ns);
    const r = await this.call('delete subnamespace', path, () => this.client.delete(path));
    const forget = () => {
      this.world.untrack(path);
      this.world.forgetSubtree(this.team, ns);
    };
    if (r.ok) return forget();
    if (r.refusal.kind === 'apiserver-unavailable') {
      this.world.uncertain.set(`ns/${ns}`, async () => {
        if (!(await this.client.get(path).catch(() => undefined))) forget();
      });
      return;
    }
    this.judge('delete subnamespace', r.refusal, /is not a leaf and doesn't allow cascading deletion/, mustRefuse);
  }

  async setCascading(): Promise<void> {
    const ns = this.namespace();
    const allow = !this.team.cascading.has(ns);
    const path = `/apis/hnc.x-k8s.io/v1alpha2/namespaces/${ns}/hierarchyconfigurations/hierarchy`;
    const r = await this.call('set allowCascadingDeletion', path, () => this.editHierarchy(path, { allowCascadingDeletion: allow }));
    if (r.ok) {
      if (allow) this.team.cascading.add(ns);
      else this.team.cascading.delete(ns);
    } else if (r.refusal.kind === 'apiserver-unavailable') {
      // Whether it took is read back when the tree is next deleted from; until then assume the safe side.
      this.team.cascading.delete(ns);
    } else this.judge('set allowCascadingDeletion', r.refusal, /^$/, false);
  }

  async move(): Promise<void> {
    const ns = this.prng.pick(this.team.movable);
    const to = this.prng.pick([this.team.root, ...this.team.movable].filter((p) => p !== ns));
    const path = `${HNC}/namespaces/${ns}/hierarchyconfigurations/hierarchy`;
    const cycle = this.world.isAncestorOrSelf(this.team, ns, to);
    const r = await this.call('move namespace', path, () => this.editHierarchy(path, { parent: to }));
    if (r.ok) this.team.parentOf.set(ns, to);
    else if (r.refusal.kind === 'apiserver-unavailable') {
      this.world.uncertain.set(`ns/${ns}`, async () => {
        const hc = await this.client.get<{ spec?: { parent?: string } }>(path);
        this.team.parentOf.set(ns, hc.spec?.parent);
      });
    } else this.judge('move namespace', r.refusal, /illegal parent: cycle/, cycle);
  }

  /** Read-modify-write of a HierarchyConfiguration's spec (created if the namespace has none yet). */
  private async editHierarchy(path: string, spec: Record<string, unknown>): Promise<KubeObject> {
    const hc = await this.client.get<KubeObject & { spec?: object }>(path).catch(() => undefined);
    if (!hc)
      return this.client.create<KubeObject>(path.slice(0, path.lastIndexOf('/')), hncObject('HierarchyConfiguration', 'hierarchy', spec));
    return this.client.replace<KubeObject>(path, { ...hc, spec: { ...hc.spec, ...spec } });
  }

  async createService(): Promise<void> {
    const ns = this.namespace();
    const name = `svc-${++this.rev}`;
    const path = `${serviceCollection(ns)}/${name}`;
    const held = this.world.owned(this.team, 'service').length;
    const r = await this.call('create service', path, () =>
      this.client.create<KubeObject>(serviceCollection(ns), { metadata: { name }, spec: { ports: [{ port: 80, protocol: 'TCP' }] } }),
    );
    if (r.ok) this.world.track('service', path, r.value);
    else if (r.refusal.kind === 'apiserver-unavailable') {
      this.world.uncertain.set(path, async () => {
        const now = await this.client.get<KubeObject>(path).catch(() => undefined);
        if (now) this.world.track('service', path, now);
      });
    } else this.judge('create service', r.refusal, /exceeded/, held >= this.team.servicesHard);
  }

  async deleteService(): Promise<void> {
    const owned = this.world.owned(this.team, 'service');
    if (!owned.length) return this.createService();
    const { path } = this.prng.pick(owned);
    const r = await this.call('delete service', path, () => this.client.delete(path));
    if (r.ok || r.refusal.code === 404) this.world.untrack(path);
    else if (r.refusal.kind === 'apiserver-unavailable') {
      this.world.uncertain.set(path, async () => {
        if (!(await this.client.get(path).catch(() => undefined))) this.world.untrack(path);
      });
    }
  }
}

/** The cluster admin's work: switching how ConfigMaps propagate, through HNCConfiguration. */
export class Admin {
  constructor(
    private readonly client: KubeClient,
    private readonly prng: Prng,
    private readonly log: RequestLog,
  ) {}

  async step(): Promise<void> {
    const mode = this.prng.pick(['Propagate', 'AllowPropagate', 'Remove']);
    const path = `${HNC}/hncconfigurations/config`;
    await this.log.call('admin', `configmaps mode ${mode}`, path, async () => {
      const cfg = await this.client.get<KubeObject & { spec?: { resources?: Array<{ resource: string; group?: string; mode?: string }> } }>(
        path,
      );
      const resources = (cfg.spec?.resources ?? []).map((r) => (r.resource === 'configmaps' && !r.group ? { ...r, mode } : r));
      return this.client.replace(path, { ...cfg, spec: { ...cfg.spec, resources } });
    });
  }
}
