// The webhooks' glue, from fake reviews: who is exempt, which API server calls a decision makes and
// how their answers (and failures) reach the verdict, how discovery answers and the propagation
// mode reach the validators. The validators themselves are core/validation's (tested there); the
// HTTPS server is server.test.ts's; the real API server's side is test/integration's.
import { describe, expect, it } from 'vitest';
import { Annotation, API_VERSION, Kind, Label, PropagationMode, Singleton } from '../core/api/constants.js';
import type { Hierarchy } from '../core/hierarchy/hierarchy.js';
import { hierarchy } from '../core/hierarchy/testing.js';
import { SourceSet } from '../core/propagation/decide.js';
import type { ResourceCheck } from './authz.js';
import type { ResourceResolution, ResourceResolver } from '../core/validation/hnc-configuration.js';
import { AdmissionHandlers, type PropagationView } from './handlers.js';
import type { UserInfo } from '../core/api/types.js';
import type { AdmissionRequest } from './review.js';

const HNC_NAMESPACE = 'hnc-system';

function review(r: Partial<AdmissionRequest> & Pick<AdmissionRequest, 'resource' | 'operation'>): AdmissionRequest {
  return {
    uid: 'u-1',
    kind: { group: r.resource.group, version: r.resource.version, kind: 'Unknown' },
    userInfo: { username: 'alice', groups: ['system:authenticated'] },
    ...r,
  };
}

/** Lookups that answer from maps and remember what they were asked. */
class Lookups {
  readonly asked: string[] = [];
  allowed = new Set<string>();
  failing = new Set<string>();
  existing = new Set<string>();
  /** Resources by group and name. */
  groups = new Map<string, Record<string, ResourceResolution>>();

  userCan(user: UserInfo, check: ResourceCheck): Promise<boolean> {
    this.asked.push(`can ${user.username} ${check.verb} ${check.group}/${check.resource} in ${check.namespace}`);
    if (this.failing.has(check.namespace!)) return Promise.reject(new Error('SubjectAccessReview: connection refused'));
    return Promise.resolve(this.allowed.has(check.namespace!));
  }

  namespaceExists(name: string): Promise<boolean> {
    this.asked.push(`exists ${name}`);
    return Promise.resolve(this.existing.has(name));
  }

  resolver(groups: readonly string[]): Promise<ResourceResolver> {
    this.asked.push(`discover ${groups.map((g) => g || '(core)').join(',') || '(none)'}`);
    return Promise.resolve(
      (group, resource) => this.groups.get(group)?.[resource] ?? { error: `no matches for ${group}/, Resource=${resource}` },
    );
  }
}

function handlers(h: Hierarchy, propagation?: PropagationView) {
  const lookups = new Lookups();
  return { lookups, handlers: new AdmissionHandlers({ hierarchy: () => h, manager: { namespace: HNC_NAMESPACE }, lookups, propagation }) };
}

const hcReview = (ns: string, parent: string, user: UserInfo = { username: 'alice' }) =>
  review({
    resource: { group: 'hnc.x-k8s.io', version: 'v1alpha2', resource: 'hierarchyconfigurations' },
    operation: 'UPDATE',
    name: Singleton.hierarchy,
    namespace: ns,
    userInfo: user,
    object: {
      apiVersion: API_VERSION,
      kind: Kind.HierarchyConfiguration,
      metadata: { name: Singleton.hierarchy, namespace: ns },
      spec: { parent },
    },
  });

describe('AdmissionHandlers', () => {
  it("exempts only HNC's own service accounts", () => {
    const { handlers: hs } = handlers(hierarchy('a'));
    const as = (groups: string[]) => hs.input(review({ ...hcReview('a', 'b'), userInfo: { username: 'x', groups } })).isHncServiceAccount;
    expect(as([`system:serviceaccounts:${HNC_NAMESPACE}`, 'system:serviceaccounts'])).toBe(true);
    expect(as(['system:serviceaccounts:other', 'system:serviceaccounts'])).toBe(false);
    expect(as([])).toBe(false);
  });

  it('asks the API server whether the requester may change both subtrees a move touches, and denies on the first refusal', async () => {
    const { handlers: hs, lookups } = handlers(hierarchy('a -> b, c'));
    lookups.allowed.add('a');
    const verdict = await hs.hierarchyConfiguration(hcReview('b', 'c'));
    expect(lookups.asked.sort()).toEqual([
      'can alice update hnc.x-k8s.io/hierarchyconfigurations in a',
      'can alice update hnc.x-k8s.io/hierarchyconfigurations in c',
    ]);
    expect(verdict).toMatchObject({ allowed: false, code: 401 });
    expect(verdict.allowed === false && verdict.message).toMatch(/User alice is not authorized to modify the subtree of c/);

    lookups.allowed.add('c');
    expect(await hs.hierarchyConfiguration(hcReview('b', 'c'))).toMatchObject({ allowed: true });
  });

  it('asks whether the requester may re-parent before a namespace is grafted under a parent (the mutator recorded it)', async () => {
    const { handlers: hs, lookups } = handlers(hierarchy('a'));
    const graft = review({
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      operation: 'CREATE',
      name: 'x',
      object: {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: {
          name: 'x',
          labels: { [Label.includedNamespace]: 'true' },
          annotations: { [Annotation.subnamespaceOf]: 'a', [Annotation.graftedBy]: 'alice' },
        },
      },
    });
    const refused = await hs.namespace(graft);
    expect(lookups.asked).toEqual(['can alice update hnc.x-k8s.io/hierarchyconfigurations in a']);
    expect(refused.allowed).toBe(false);
    lookups.allowed.add('a');
    expect(await hs.namespace(graft)).toMatchObject({ allowed: true });
  });

  it('turns a lookup that fails into a denial that says why, never a crash', async () => {
    const { handlers: hs, lookups } = handlers(hierarchy('a, c'));
    lookups.failing.add('c');
    const verdict = await hs.hierarchyConfiguration(hcReview('a', 'c'));
    expect(verdict.allowed).toBe(false);
    expect(verdict.allowed === false && verdict.message).toMatch(/connection refused/);
  });

  it('resolves the groups an HNCConfiguration names through discovery, once each', async () => {
    const { handlers: hs, lookups } = handlers(hierarchy('a'));
    lookups.groups.set('', { configmaps: { kind: 'ConfigMap', version: 'v1', namespaced: true, group: '' } });
    const config = (resources: Array<{ group?: string; resource: string; mode?: string }>) =>
      review({
        resource: { group: 'hnc.x-k8s.io', version: 'v1alpha2', resource: 'hncconfigurations' },
        operation: 'UPDATE',
        name: Singleton.config,
        object: { apiVersion: API_VERSION, kind: Kind.HNCConfiguration, metadata: { name: Singleton.config }, spec: { resources } },
      });
    expect(await hs.hncConfiguration(config([{ resource: 'configmaps', mode: PropagationMode.Propagate }]))).toMatchObject({
      allowed: true,
    });
    const verdict = await hs.hncConfiguration(
      config([
        { group: 'x.io', resource: 'widgets' },
        { group: 'x.io', resource: 'gadgets' },
      ]),
    );
    expect(lookups.asked).toEqual(['discover (core)', 'discover x.io']);
    expect(verdict.allowed).toBe(false);
    expect(verdict.allowed === false && verdict.message).toMatch(/no matches for x\.io\/, Resource=widgets/);
    // A group that is not a name never reaches discovery (nor a URL): the validator refuses it.
    const climbing = await hs.hncConfiguration(config([{ group: '../../api/v1', resource: 'secrets' }]));
    expect(lookups.asked.at(-1)).toBe('discover (none)');
    expect(climbing.allowed).toBe(false);
  });

  it('guards the copies of a propagated type only, and only while it propagates', () => {
    const copy = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'b', labels: { [Label.inheritedFrom]: 'a' } } };
    const edit = review({
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      operation: 'UPDATE',
      name: 'cm',
      namespace: 'b',
      object: { ...copy, data: { x: 'mine' } },
      oldObject: copy,
    });
    const h = hierarchy('a -> b');
    let mode: PropagationMode = PropagationMode.Propagate;
    const view: PropagationView = {
      context: (group, resource) =>
        group === '' && resource === 'configmaps'
          ? { hierarchy: h, type: { group: '', kind: 'ConfigMap', mode }, sources: new SourceSet() }
          : undefined,
      propagatingKinds: () => [],
    };
    const { handlers: hs } = handlers(h, view);
    expect(hs.object(edit)).toMatchObject({ allowed: false, code: 403 });
    expect(hs.object({ ...edit, userInfo: { username: 'hnc', groups: [`system:serviceaccounts:${HNC_NAMESPACE}`] } })).toMatchObject({
      allowed: true,
    });
    mode = PropagationMode.Ignore;
    expect(hs.object(edit)).toMatchObject({ allowed: true });
    expect(handlers(h).handlers.object(edit)).toMatchObject({ allowed: true }); // no controller in this process: not guarded
  });
});
