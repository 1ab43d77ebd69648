// Object propagation on the real control plane (webhooks off, so that bad input can be planted as
// a user bypassing them would): what is copied, where, what is never touched, and how many writes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manager } from '../../controller/manager.js';
import { Singleton } from '../../core/api/constants.js';
import { hncConfigurationPath } from '../../core/api/paths.js';
import { ApiError } from '../../kube/client.js';
import { TestCluster, eventually, eventuallyEqual, update } from '../support/cluster.js';
import { startManager } from '../support/manager.js';
import { conditions, setParent, treeDepths } from '../support/hnc.js';

let cluster: TestCluster;
let manager: Manager;

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
type Obj = {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string>; resourceVersion: string; uid: string };
  roleRef?: { name: string };
  data?: Record<string, string>;
};
const get = (path: string) =>
  cluster.admin.get<Obj>(path).catch((e: unknown) => (e instanceof ApiError && e.code === 404 ? undefined : Promise.reject(e)));
const role = (name: string, extra: Record<string, unknown> = {}) => ({
  metadata: { name, ...extra },
  rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
});

/** a -> b -> c, returned as [a, b, c] once the tree labels show the forest is in place. */
async function chain(prefix: string, n = 3): Promise<[string, string, string]> {
  const names: string[] = [];
  for (let i = 0; i < n; i++) names.push(await cluster.namespace(`${prefix}${i}`));
  for (let i = 1; i < n; i++) await setParent(cluster.admin, names[i]!, names[i - 1]!);
  await eventually(
    async () => (Object.keys((await treeDepths(cluster.admin, names[n - 1]!)) ?? {}).length === n ? true : undefined),
    'the chain',
  );
  return names as [string, string, string];
}

/** Sets HNCConfiguration's spec.resources and waits until the manager reports them in status. */
async function configure(resources: Array<{ group?: string; resource: string; mode: string }>): Promise<void> {
  const path = hncConfigurationPath(Singleton.config);
  await eventually(() => get(path), 'the config object created by the manager');
  await update<Record<string, unknown>>(cluster.admin, path, (cfg) => ({ ...cfg, spec: { resources } }));
  await eventually(async () => {
    const c = await cluster.admin.get<{ status?: { resources?: Array<{ resource: string; mode: string }> } }>(path);
    return resources.every((r) => c.status?.resources?.some((x) => x.resource === r.resource && x.mode === r.mode)) ? true : undefined;
  }, 'the configuration to take effect');
}

beforeAll(async () => {
  cluster = await TestCluster.connect();
  // The manager may propagate ConfigMaps only once an admin aggregates that permission into its role.
  await cluster.admin.request('PATCH', `${RBAC}/clusterroles/hnc-manager-configmaps`, {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'hnc-manager-configmaps', labels: { 'hnc.x-k8s.io/aggregate-to-manager': 'true' } },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }],
    },
    contentType: 'application/apply-patch+yaml',
    query: { fieldManager: 'test', force: true },
  });
  manager = await startManager('propagation');
});
afterAll(async () => {
  await manager?.stop();
  // HNCConfiguration is cluster-wide: later files start from an empty spec, not this file's last case.
  await update<Record<string, unknown>>(cluster.admin, hncConfigurationPath(Singleton.config), (cfg) => ({
    ...cfg,
    spec: { resources: [] },
  }));
  await cluster.cleanup();
});

describe('propagation', () => {
  it('copies Roles, RoleBindings and NetworkPolicies down the tree, marked and stripped', async () => {
    // RBAC always propagates; NetworkPolicies once HNCConfiguration names them (as in HNC).
    await configure([{ group: 'networking.k8s.io', resource: 'networkpolicies', mode: 'Propagate' }]);
    const [a, b, c] = await chain('prop');
    await cluster.admin.create(
      `${RBAC}/namespaces/${a}/roles`,
      role('reader', {
        labels: { team: 'x', 'argocd.argoproj.io/instance': 'app' },
        annotations: { note: 'hi', 'propagate.hnc.x-k8s.io/all': 'true' },
      }),
    );
    await cluster.admin.create(`${RBAC}/namespaces/${a}/rolebindings`, {
      metadata: { name: 'readers' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'readers' }],
    });
    await cluster.admin.create(`/apis/networking.k8s.io/v1/namespaces/${a}/networkpolicies`, {
      metadata: { name: 'deny-all' },
      spec: { podSelector: {}, policyTypes: ['Ingress'] },
    });
    for (const ns of [b, c]) {
      const copy = await eventually(() => get(`${RBAC}/namespaces/${ns}/roles/reader`), `the Role in ${ns}`);
      expect(copy.metadata.labels).toEqual({ team: 'x', 'hnc.x-k8s.io/inherited-from': a, 'app.kubernetes.io/managed-by': 'hnc.x-k8s.io' });
      expect(copy.metadata.annotations).toEqual({ note: 'hi' });
      await eventually(() => get(`${RBAC}/namespaces/${ns}/rolebindings/readers`), `the RoleBinding in ${ns}`);
      await eventually(() => get(`/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies/deny-all`), `the NetworkPolicy in ${ns}`);
    }
  });

  it('makes one write per descendant for a change, none for an unchanged copy, none on restart', async () => {
    const [a, b, c] = await chain('writes');
    await cluster.admin.create(`${RBAC}/namespaces/${a}/roles`, role('counted'));
    for (const ns of [b, c]) await eventually(() => get(`${RBAC}/namespaces/${ns}/roles/counted`), 'the copies');
    await manager.idle();
    const before = manager.writer.writesTo('roles');
    const src = (await get(`${RBAC}/namespaces/${a}/roles/counted`))!;
    await cluster.admin.replace(`${RBAC}/namespaces/${a}/roles/counted`, {
      ...src,
      rules: [{ apiGroups: [''], resources: ['pods', 'services'], verbs: ['get'] }],
    });
    await eventually(
      async () =>
        (
          (await get(`${RBAC}/namespaces/${c}/roles/counted`)) as { rules?: Array<{ resources: string[] }> } | undefined
        )?.rules?.[0]?.resources.includes('services')
          ? true
          : undefined,
      'the update to arrive',
    );
    await manager.idle();
    expect(manager.writer.writesTo('roles') - before).toBe(2); // one update per descendant
    // Touching the source's status-like metadata (a label HNC strips) changes no copy.
    const again = (await get(`${RBAC}/namespaces/${a}/roles/counted`))!;
    const total = manager.writer.writesTo('roles');
    await cluster.admin.replace(`${RBAC}/namespaces/${a}/roles/counted`, {
      ...again,
      metadata: { ...again.metadata, labels: { 'example.hnc.x-k8s.io/ignored': 'x' } },
    });
    await manager.idle();
    expect(manager.writer.writesTo('roles')).toBe(total);
  });

  it('lets the highest ancestor win, and never overwrites a user object in the way (condition and event)', async () => {
    const [a, b, c] = await chain('win');
    await cluster.admin.create(`${RBAC}/namespaces/${b}/roles`, role('shared', { labels: { from: 'b' } }));
    await cluster.admin.create(`${RBAC}/namespaces/${a}/roles`, role('shared', { labels: { from: 'a' } }));
    await eventuallyEqual(
      async () => (await get(`${RBAC}/namespaces/${c}/roles/shared`))?.metadata.labels?.from,
      'a',
      'the highest ancestor wins in c',
    );
    const mine = (await get(`${RBAC}/namespaces/${b}/roles/shared`))!;
    expect(mine.metadata.labels).toEqual({ from: 'b' }); // b's own object: untouched
    await eventuallyEqual(
      () => conditions(cluster.admin, b),
      [
        `ObjectConflict/CannotPropagateObject: Not overwriting objects HNC did not create: Role "shared" (from "${a}"). Rename or remove them to receive the propagated objects`,
      ],
      'the conflict condition',
    );
    const events = await cluster.admin.get<{ items: Array<{ reason: string; message: string; involvedObject: { name: string } }> }>(
      `/api/v1/namespaces/${b}/events`,
    );
    expect(
      events.items.some(
        (e) =>
          e.reason === 'CannotPropagateObject' && e.involvedObject.name === 'shared' && e.message.includes('it was not created by HNC'),
      ),
    ).toBe(true);
    // Removing the user's object lets the ancestor's copy in and clears the condition.
    await cluster.admin.delete(`${RBAC}/namespaces/${b}/roles/shared`);
    await eventuallyEqual(
      async () => (await get(`${RBAC}/namespaces/${b}/roles/shared`))?.metadata.labels?.['hnc.x-k8s.io/inherited-from'],
      a,
      'the copy in b',
    );
    await eventuallyEqual(() => conditions(cluster.admin, b), [], 'the condition cleared');
  });

  it('honours selectors: treeSelect and none', async () => {
    const [a, b, c] = await chain('sel');
    await cluster.admin.create(
      `${RBAC}/namespaces/${a}/roles`,
      role('only-c', { annotations: { 'propagate.hnc.x-k8s.io/treeSelect': c } }),
    );
    await cluster.admin.create(
      `${RBAC}/namespaces/${a}/roles`,
      role('nowhere', { annotations: { 'propagate.hnc.x-k8s.io/none': 'true' } }),
    );
    await cluster.admin.create(`${RBAC}/namespaces/${a}/roles`, role('marker'));
    await eventually(() => get(`${RBAC}/namespaces/${c}/roles/marker`), 'the plain role everywhere');
    await eventually(() => get(`${RBAC}/namespaces/${c}/roles/only-c`), 'the treeSelect role in c');
    await manager.idle();
    expect(await get(`${RBAC}/namespaces/${b}/roles/only-c`)).toBeUndefined();
    expect(await get(`${RBAC}/namespaces/${b}/roles/nowhere`)).toBeUndefined();
    expect(await get(`${RBAC}/namespaces/${c}/roles/nowhere`)).toBeUndefined();
  });

  it('records CannotParseSelector on a source whose selector does not parse (planted past the webhooks)', async () => {
    const [a, b] = await chain('badsel', 2);
    await cluster.admin.create(
      `${RBAC}/namespaces/${a}/roles`,
      role('broken', { annotations: { 'propagate.hnc.x-k8s.io/select': 'a in (' } }),
    );
    const event = await eventually(async () => {
      const list = await cluster.admin.get<{ items: Array<{ reason: string; message: string; involvedObject: { name: string } }> }>(
        `/api/v1/namespaces/${a}/events`,
      );
      return list.items.find((e) => e.reason === 'CannotParseSelector' && e.involvedObject.name === 'broken');
    }, 'the CannotParseSelector event');
    expect(event.message).toContain('propagate.hnc.x-k8s.io/select');
    await manager.idle();
    expect(await get(`${RBAC}/namespaces/${b}/roles/broken`)).toBeUndefined(); // propagates nowhere
  });

  it('removes copies when the source goes and when a namespace leaves the subtree', async () => {
    const [a, b, c] = await chain('gone');
    await cluster.admin.create(`${RBAC}/namespaces/${a}/roles`, role('temp'));
    await eventually(() => get(`${RBAC}/namespaces/${c}/roles/temp`), 'the copies');
    await setParent(cluster.admin, c, undefined);
    await eventuallyEqual(
      async () => (await get(`${RBAC}/namespaces/${c}/roles/temp`)) === undefined,
      true,
      'the copy gone from the namespace that left',
    );
    expect(await get(`${RBAC}/namespaces/${b}/roles/temp`)).toBeDefined();
    await cluster.admin.delete(`${RBAC}/namespaces/${a}/roles/temp`);
    await eventuallyEqual(
      async () => (await get(`${RBAC}/namespaces/${b}/roles/temp`)) === undefined,
      true,
      'the copy gone with its source',
    );
  });

  it('recreates a RoleBinding copy whose roleRef changed', async () => {
    const [a, b] = await chain('roleref', 2);
    const rb = (roleName: string) => ({
      metadata: { name: 'binding' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'dave' }],
    });
    await cluster.admin.create(`${RBAC}/namespaces/${a}/rolebindings`, rb('view'));
    const first = await eventually(() => get(`${RBAC}/namespaces/${b}/rolebindings/binding`), 'the copy');
    await cluster.admin.delete(`${RBAC}/namespaces/${a}/rolebindings/binding`);
    await cluster.admin.create(`${RBAC}/namespaces/${a}/rolebindings`, rb('edit'));
    await eventuallyEqual(
      async () => (await get(`${RBAC}/namespaces/${b}/rolebindings/binding`))?.roleRef?.name,
      'edit',
      'the new roleRef',
    );
    expect((await get(`${RBAC}/namespaces/${b}/rolebindings/binding`))!.metadata.uid).not.toBe(first.metadata.uid);
  });

  it('writes the source count in HNCConfiguration once a stream of new sources has settled, not on every change', async () => {
    // Each Role in a namespace without children is a source that propagates nowhere: the count of
    // sources in HNCConfiguration's status moves with each, and no copy is written. A status
    // written on every move (each write's own watch event asking for the next) was about two
    // writes a second for as long as such objects kept coming.
    const [leaf] = await chain('srcstream', 1);
    const sources = async () => {
      const cfg = await cluster.admin.get<{ status?: { resources?: Array<{ resource: string; numSourceObjects?: number }> } }>(
        hncConfigurationPath(Singleton.config),
      );
      return cfg.status?.resources?.find((r) => r.resource === 'roles')?.numSourceObjects;
    };
    // Every Role that is not a copy is counted (tests in this file run one at a time). Both are
    // read on every try: namespaces that earlier files deleted may still be losing their Roles to
    // the namespace controller, so the cluster's count can move during and after the stream too.
    const listed = async () =>
      (await cluster.admin.get<{ items: unknown[] }>(`${RBAC}/roles?labelSelector=!hnc.x-k8s.io%2Finherited-from`)).items.length;
    const countsAgree = async (what: string) => {
      let last: unknown;
      await eventually(async () => {
        const [inCluster, inStatus] = [await listed(), await sources()];
        last = { inCluster, inStatus };
        return inCluster === inStatus ? true : undefined;
      }, what).catch(() => Promise.reject(new Error(`timed out waiting for ${what}: ${JSON.stringify(last)}`)));
    };
    await countsAgree('the count of Roles in the status');
    const before = manager.writer.writesTo('hncconfigurations');
    // New Roles for three seconds, longer than the status's coalescing delay (1 s): a status
    // reconcile falls inside the stream.
    let made = 0;
    for (const until = Date.now() + 3000; Date.now() < until; made++) {
      await cluster.admin.create(`${RBAC}/namespaces/${leaf}/roles`, role(`r${made}`));
    }
    expect(made).toBeGreaterThan(10);
    await countsAgree('the final count in the status');
    // The count once the stream had settled, and at most one while it ran (a pause of the stream
    // longer than the settling time may let one through).
    expect(manager.writer.writesTo('hncconfigurations') - before).toBeLessThanOrEqual(2);
  });

  it('propagates a kind named in HNCConfiguration, reports it in status, and removes copies in Remove mode', async () => {
    const [a, b] = await chain('cfg', 2);
    await cluster.admin.create(`/api/v1/namespaces/${a}/configmaps`, { metadata: { name: 'settings' }, data: { k: 'v' } });
    const setMode = (mode: string) => configure([{ resource: 'configmaps', mode }]);
    await setMode('Propagate');
    await eventuallyEqual(async () => (await get(`/api/v1/namespaces/${b}/configmaps/settings`))?.data, { k: 'v' }, 'the ConfigMap copy');
    await eventually(async () => {
      const cfg = await cluster.admin.get<{
        status?: { resources?: Array<{ resource: string; mode: string; numSourceObjects?: number; numPropagatedObjects?: number }> };
      }>(hncConfigurationPath(Singleton.config));
      const cm = cfg.status?.resources?.find((r) => r.resource === 'configmaps');
      return cm && cm.mode === 'Propagate' && (cm.numPropagatedObjects ?? 0) >= 1 && (cm.numSourceObjects ?? 0) >= 1 ? true : undefined;
    }, 'the status counts');
    // kube-root-ca.crt is in every namespace and never propagated.
    expect(
      (await get(`/api/v1/namespaces/${b}/configmaps/kube-root-ca.crt`))?.metadata.labels?.['hnc.x-k8s.io/inherited-from'],
    ).toBeUndefined();
    await setMode('Remove');
    await eventuallyEqual(async () => (await get(`/api/v1/namespaces/${b}/configmaps/settings`)) === undefined, true, 'the copy removed');
    expect(await get(`/api/v1/namespaces/${a}/configmaps/settings`)).toBeDefined(); // the source stays
  });

  it('records CannotParseSelector on an existing object when its kind is switched to Propagate, not only when it next changes', async () => {
    const [a] = await chain('modesel', 1);
    await configure([{ resource: 'configmaps', mode: 'Ignore' }]);
    await cluster.admin.create(`/api/v1/namespaces/${a}/configmaps`, {
      metadata: { name: 'garbled', annotations: { 'propagate.hnc.x-k8s.io/select': 'a in (' } },
      data: {},
    });
    const events = async () =>
      (
        await cluster.admin.get<{ items: Array<{ reason: string; message: string; involvedObject: { name: string } }> }>(
          `/api/v1/namespaces/${a}/events`,
        )
      ).items.filter((e) => e.reason === 'CannotParseSelector' && e.involvedObject.name === 'garbled');
    await manager.idle();
    expect(await events()).toEqual([]); // not propagated: nothing to warn about
    await configure([{ resource: 'configmaps', mode: 'Propagate' }]);
    const [event] = await eventually(async () => ((await events()).length ? events() : undefined), 'the CannotParseSelector event');
    expect(event!.message).toContain('propagate.hnc.x-k8s.io/select');
    await configure([]);
  });

  it('picks up a custom resource whose CRD is installed after HNCConfiguration names it, without a restart', async () => {
    const group = `${TestCluster.uniqueName('g')}.example.com`;
    await configure([]);
    await update<Record<string, unknown>>(cluster.admin, hncConfigurationPath(Singleton.config), (cfg) => ({
      ...cfg,
      spec: { resources: [{ group, resource: 'widgets', mode: 'Propagate' }] },
    }));
    await eventually(async () => {
      const c = await cluster.admin.get<{ status?: { conditions?: Array<{ reason: string; message: string }> } }>(
        hncConfigurationPath(Singleton.config),
      );
      return c.status?.conditions?.find((x) => x.reason === 'ResourceNotFound' && x.message.includes('widgets'));
    }, 'ResourceNotFound while the CRD is missing');
    // An admin installs the CRD and lets the manager handle it (aggregated into its role).
    await cluster.admin.create('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    });
    await cluster.admin.request('PATCH', `${RBAC}/clusterroles/hnc-manager-widgets-${group}`, {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: `hnc-manager-widgets-${group}`, labels: { 'hnc.x-k8s.io/aggregate-to-manager': 'true' } },
        rules: [{ apiGroups: [group], resources: ['widgets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }],
      },
      contentType: 'application/apply-patch+yaml',
      query: { fieldManager: 'test', force: true },
    });
    const [a, b] = await chain('crd', 2);
    await eventually(
      () =>
        cluster.admin.create(`/apis/${group}/v1/namespaces/${a}/widgets`, {
          apiVersion: `${group}/v1`,
          kind: 'Widget',
          metadata: { name: 'w' },
          size: 3,
        }),
      'the CRD to be served',
    );
    const copy = await eventually(() => get(`/apis/${group}/v1/namespaces/${b}/widgets/w`), 'the Widget copy', 60_000);
    expect(copy.metadata.labels?.['hnc.x-k8s.io/inherited-from']).toBe(a);
    await configure([]);
  });

  it('reports an HNCConfiguration naming an unknown or cluster-scoped resource', async () => {
    await update<Record<string, unknown>>(cluster.admin, hncConfigurationPath(Singleton.config), (cfg) => ({
      ...cfg,
      spec: { resources: [{ group: 'example.com', resource: 'widgets' }] },
    }));
    await eventually(async () => {
      const c = await cluster.admin.get<{ status?: { conditions?: Array<{ type: string; reason: string; message: string }> } }>(
        hncConfigurationPath(Singleton.config),
      );
      return c.status?.conditions?.find(
        (x) => x.type === 'BadConfiguration' && x.reason === 'ResourceNotFound' && x.message.includes('widgets'),
      );
    }, 'the BadConfiguration condition');
  });
});
