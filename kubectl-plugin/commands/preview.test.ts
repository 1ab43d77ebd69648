// The plugin's half of `--dry-run`: reading, admission, rendering and the exit code. What a change
// does is core/preview's (its own tests); that the server and controller agree is proven in
// test/integration/kubectl-hns-preview.test.ts.
import { describe, expect, it } from 'vitest';
import { Label } from '../../core/api/index.js';
import type { AnyObject } from '../api.js';
import { CliError, ServerError } from '../errors.js';
import { captureIo } from '../io.js';
import { FakeApi } from '../testing/fake-api.js';
import { runCreate, runDelete } from './anchors.js';
import { runCli } from '../program.js';
import type { PreviewReport } from '../model.js';
import { dryRunMode, previewFlags } from './preview.js';
import { runSet } from './set.js';

const rb = (namespace: string, name: string, group: string, from?: string): AnyObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { namespace, name, labels: from ? { [Label.inheritedFrom]: from } : {} },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
  subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: group }],
});

// team-a ── service-1;  team-b.  Every namespace labelled as managed by HNC.
function cluster(): FakeApi {
  const api = new FakeApi()
    .addNamespace('team-a', { children: ['service-1'] })
    .addNamespace('team-b')
    .addNamespace('service-1', { parent: 'team-a' });
  for (const ns of api.namespaces.values()) ns.metadata.labels = { [Label.includedNamespace]: 'true' };
  api.objects.set('team-a/rolebindings', [rb('team-a', 'team-a-admins', 'team-a')]);
  api.objects.set('team-b/rolebindings', [rb('team-b', 'team-b-admins', 'team-b')]);
  api.objects.set('service-1/rolebindings', [rb('service-1', 'team-a-admins', 'team-a', 'team-a')]);
  api.objects.set('/clusterroles', [{ metadata: { name: 'admin' } }]);
  return api;
}

/** The controller's counts in HNCConfiguration's status, as it writes them once in sync: service-1 holds one copy. */
function inSync(api: FakeApi): FakeApi {
  const rbac = { group: 'rbac.authorization.k8s.io', version: 'v1', mode: 'Propagate' as const };
  api.config = {
    metadata: { name: 'config' },
    spec: {},
    status: {
      resources: [
        { ...rbac, resource: 'roles', numPropagatedObjects: 0, numSourceObjects: 0 },
        { ...rbac, resource: 'rolebindings', numPropagatedObjects: 1, numSourceObjects: 2 },
      ],
    },
  };
  return api;
}

const writes = (api: FakeApi) => api.calls.filter((c) => /^(create|replace|delete) /.test(c));

describe('--dry-run', () => {
  it('reads kubectl\'s spellings: alone or "server" asks admission, "client" does not, "none"/"false" is no dry run', () => {
    expect(['unchanged', 'server', 'true', 'client', 'none', 'false', undefined].map(dryRunMode)).toEqual([
      'server',
      'server',
      'server',
      'client',
      'none',
      'none',
      'none',
    ]);
    expect(() => dryRunMode('yes')).toThrow('Invalid dry-run value (yes). Must be "none", "server", or "client".');
  });

  it("says how it read the copies from kubectl's debug log level on (-v 4), or with HNS_PREVIEW_DEBUG=1", () => {
    const saved = process.env.HNS_PREVIEW_DEBUG;
    delete process.env.HNS_PREVIEW_DEBUG;
    try {
      const debug = (v?: string) => previewFlags({ 'dry-run': 'server', ...(v !== undefined && { v }) }).debug === true;
      expect([undefined, '0', '3', '4', '10'].map(debug)).toEqual([false, false, false, true, true]);
      process.env.HNS_PREVIEW_DEBUG = '1';
      expect(debug('0')).toBe(true);
    } finally {
      if (saved === undefined) delete process.env.HNS_PREVIEW_DEBUG;
      else process.env.HNS_PREVIEW_DEBUG = saved;
    }
  });

  it("takes the log levels kubectl takes (klog's Level, 32 bits) and refuses the others", async () => {
    const level = async (v: string) => {
      const io = captureIo();
      let seen: number | undefined;
      const code = await runCli(['tree', 'team', `--v=${v}`], {
        io,
        connect: (flags) => {
          seen = flags.v;
          throw new CliError('Error: stop here');
        },
      });
      return code === 1 && io.stderr === 'Error: stop here\n' ? seen : io.stderr;
    };
    expect(await level('+7')).toBe(7);
    expect(await level('-1')).toBe(-1);
    expect(await level('2147483647')).toBe(2147483647);
    for (const v of ['2147483648', '99999999999', '-2147483649', '4.0', ''])
      expect(await level(v)).toBe(`Error: invalid argument "${v}" for "-v, --v" flag: a whole number is expected (the log level)\n`);
  });

  it('refuses a log level that is not a whole number, as kubectl does, before connecting', async () => {
    const io = captureIo();
    let connected = false;
    const code = await runCli(['set', 'sub', '--parent', 'team-b', '--dry-run', '--v=high'], {
      io,
      connect: () => {
        connected = true;
        throw new CliError('Error: not expected');
      },
    });
    expect([code, connected, io.stderr]).toEqual([
      1,
      false,
      'Error: invalid argument "high" for "-v, --v" flag: a whole number is expected (the log level)\n',
    ]);
  });

  it('set --parent: admission asked with a dry-run write, each kind listed once, the move shown, nothing stored', async () => {
    const api = cluster();
    const io = captureIo();
    await runSet(api, io, 'service-1', { parent: 'team-b' }, { dryRun: 'server', output: 'text' });
    expect(writes(api)).toEqual(['replace hc service-1 (dry run)']);
    expect(api.hierarchies.get('service-1')?.spec?.parent).toBe('team-a');
    // No count of copies from the controller (HNCConfiguration has no status here): every object is listed.
    expect(api.calls.filter((c) => c.startsWith('list rolebindings'))).toEqual([
      'list rolebindings * !hnc.x-k8s.io/inherited-from',
      'list rolebindings *',
    ]);
    expect(io.stdout).toContain('Dry run (nothing was written): Changing the parent of service-1 from team-a to team-b\n');
    expect(io.stdout).toContain('Admission: allowed (update HierarchyConfiguration service-1/hierarchy)');
    expect(io.stdout).toContain('service-1: -team-a.tree.hnc.x-k8s.io/depth=1, +team-b.tree.hnc.x-k8s.io/depth=1');
    expect(io.stdout).toContain('  create RoleBinding team-b-admins (from team-b) in service-1\n');
    expect(io.stdout).toContain('  delete RoleBinding team-a-admins (from team-a) in service-1\n');
    expect(io.stdout).toContain('  group team-a: loses admin in service-1 (was inherited from team-a)\n');
    expect(io.stdout).toContain('  group team-b: gains admin in service-1 (inherited from team-b)\n');
  });

  it('in sync (the API server and the controller count the copies made from the sources): no copy is read, the same answer', async () => {
    const listed = captureIo();
    await runSet(cluster(), listed, 'service-1', { parent: 'team-b' }, { dryRun: 'server', output: 'json' });
    const api = inSync(cluster());
    const io = captureIo();
    await runSet(api, io, 'service-1', { parent: 'team-b' }, { dryRun: 'server', output: 'json', debug: true });
    expect(io.stdout).toBe(listed.stdout);
    expect(api.calls.filter((c) => c.includes('rolebindings'))).toEqual([
      'list rolebindings * !hnc.x-k8s.io/inherited-from',
      'count rolebindings',
    ]);
    expect(io.stderr).toMatch(/^preview: copies synthesized; \d+ requests\n$/);
  });

  it('a copy missing, an extra one, or a controller that counts otherwise: every object is listed, the same answer as before', async () => {
    const drifted = [
      (api: FakeApi) => api.objects.set('service-1/rolebindings', []),
      (api: FakeApi) => api.objects.get('team-b/rolebindings')!.push(rb('team-b', 'left-over', 'x', 'team-a')),
      (api: FakeApi) => (api.config!.status!.resources![1]!.numPropagatedObjects = 0),
    ];
    const why = [
      '0 rolebindings copies in the cluster, 1 made from the sources',
      '2 rolebindings copies in the cluster, 1 made from the sources',
      'the controller counts 0 rolebindings copies in place, 1 made from the sources',
    ];
    for (const [i, drift] of drifted.entries()) {
      const api = inSync(cluster());
      drift(api);
      const io = captureIo();
      await runSet(api, io, 'service-1', { parent: 'team-b' }, { dryRun: 'client', output: 'json', debug: true });
      expect(io.stderr).toContain(`copies listed (${why[i]})`);
      expect(api.calls).toContain('list rolebindings *');
      const listed = captureIo();
      const plain = cluster();
      drift(inSync(plain));
      plain.config = undefined;
      await runSet(plain, listed, 'service-1', { parent: 'team-b' }, { dryRun: 'client', output: 'json' });
      expect(io.stdout).toBe(listed.stdout);
    }
  });

  it("a refusal: the server's own message, exit non-zero (CliError), and -o json says allowed: false", async () => {
    const api = cluster();
    api.failures.set(
      'replace hc service-1 (dry run)',
      new ServerError(403, 'admission webhook "hierarchyconfigurations.hnc.x-k8s.io" denied the request: no', 'Forbidden'),
    );
    const io = captureIo();
    await expect(runSet(api, io, 'service-1', { parent: 'team-b' }, { dryRun: 'server', output: 'json' })).rejects.toThrow(CliError);
    const report = JSON.parse(io.stdout) as PreviewReport;
    expect(report.admission).toEqual({
      checked: true,
      allowed: false,
      checks: [
        {
          request: 'update HierarchyConfiguration service-1/hierarchy',
          allowed: false,
          code: 403,
          message: 'admission webhook "hierarchyconfigurations.hnc.x-k8s.io" denied the request: no',
        },
      ],
    });
    expect(report.copies.create.map((c) => `${c.namespace}/${c.name}`)).toEqual(['service-1/team-b-admins']);
  });

  it('--dry-run=client asks no admission and sends nothing', async () => {
    const api = cluster();
    const io = captureIo();
    await runSet(api, io, 'service-1', { root: true }, { dryRun: 'client', output: 'yaml' });
    expect(writes(api)).toEqual([]);
    expect(io.stdout).toContain('checked: false');
  });

  it("nothing to change: HNC's lines, no preview", async () => {
    const api = cluster();
    const io = captureIo();
    await runSet(api, io, 'service-1', { parent: 'team-a' }, { dryRun: 'server', output: 'text' });
    expect(io.stdout).toBe('Parent of service-1 is already team-a; unchanged\nNo changes made\n');
  });

  it('a caller who may not list across the cluster: the namespaces concerned are read one by one, with a note', async () => {
    const api = cluster();
    for (const call of ['list ns', 'list hc', 'list subnamespaceanchors *', 'list rolebindings *', 'list roles *', 'list clusterroles *'])
      api.forbidden.add(call);
    const io = captureIo();
    await runSet(api, io, 'service-1', { parent: 'team-b' }, { dryRun: 'server', output: 'json' });
    const report = JSON.parse(io.stdout) as PreviewReport;
    expect(report.copies.create.map((c) => `${c.namespace}/${c.name}`)).toEqual(['service-1/team-b-admins']);
    expect(report.notes[0]).toMatch(/only the namespaces this change concerns were read \(3\)/);
    expect(api.calls).toContain('list rolebindings team-b');
  });

  it('read one by one: anchors listed only where a subnamespace can be', async () => {
    // team-a ── service-1 ── leaf-1, leaf-2 (leaves: an HC with no children)
    const api = cluster()
      .addNamespace('service-1', { parent: 'team-a', children: ['leaf-1', 'leaf-2'] })
      .addNamespace('leaf-1', { parent: 'service-1' })
      .addNamespace('leaf-2', { parent: 'service-1' });
    for (const n of ['service-1', 'leaf-1', 'leaf-2']) api.namespaces.get(n)!.metadata.labels = { [Label.includedNamespace]: 'true' };
    for (const n of ['leaf-1', 'leaf-2']) api.objects.set(`${n}/rolebindings`, [rb(n, 'team-a-admins', 'team-a', 'team-a')]);
    for (const call of ['list ns', 'list hc', 'list subnamespaceanchors *', 'list rolebindings *', 'list roles *', 'list clusterroles *'])
      api.forbidden.add(call);
    const run = async () => {
      const io = captureIo();
      await runSet(api, io, 'service-1', { parent: 'team-b' }, { dryRun: 'client', output: 'json' });
      return JSON.parse(io.stdout) as PreviewReport;
    };
    const report = await run();
    expect(report.copies.create.map((c) => `${c.namespace}/${c.name}`).sort()).toEqual(
      ['leaf-1', 'leaf-2', 'service-1'].map((n) => `${n}/team-b-admins`),
    );
    const anchorLists = api.calls.filter((c) => c.startsWith('list anchors'));
    expect(anchorLists.sort()).toEqual(['list anchors service-1', 'list anchors team-a', 'list anchors team-b']);
    expect(api.calls).toContain('get ns leaf-1');
  });

  it('read one by one: what a cluster-wide list gave is not asked for again', async () => {
    const api = cluster();
    for (const call of ['list hc', 'list rolebindings *', 'list roles *']) api.forbidden.add(call);
    const io = captureIo();
    await runSet(api, io, 'service-1', { parent: 'team-b' }, { dryRun: 'client', output: 'json' });
    const report = JSON.parse(io.stdout) as PreviewReport;
    expect(report.copies.create.map((c) => `${c.namespace}/${c.name}`)).toEqual(['service-1/team-b-admins']);
    // The namespaces and anchors came from their lists; the HierarchyConfigurations one by one.
    const walk = api.calls.slice(api.calls.indexOf('list ns'));
    expect(walk.filter((c) => c.startsWith('get ns') || c.startsWith('list anchors'))).toEqual([]);
    expect(walk.filter((c) => c.startsWith('get hc')).sort()).toEqual(['get hc service-1', 'get hc team-a', 'get hc team-b']);
  });

  it('create: the anchor created with dryRun, the new subnamespace gets its copies', async () => {
    const api = cluster();
    const io = captureIo();
    await runCreate(api, io, 'dev', 'team-b', {}, { dryRun: 'server', output: 'text' });
    expect(writes(api)).toEqual(['create anchor team-b/dev (dry run)']);
    expect(api.anchors.size).toBe(0);
    expect(io.stdout).toContain('Namespaces created: dev');
    expect(io.stdout).toContain('  create RoleBinding team-b-admins (from team-b) in dev\n');
  });

  it('delete -a: a refusal only for want of cascading deletion counts as allowed, with a note', async () => {
    const api = cluster();
    api.anchors.set('team-a/service-1', { metadata: { namespace: 'team-a', name: 'service-1' }, status: { status: 'Ok' } });
    api.failures.set(
      'delete anchor team-a/service-1 (dry run)',
      new ServerError(403, "subnamespace service-1 is not a leaf and doesn't allow cascading deletion. Please set ...", 'Forbidden'),
    );
    const io = captureIo();
    await runDelete(api, io, 'service-1', 'team-a', true, { dryRun: 'server', output: 'text' });
    expect(writes(api)).toEqual(['replace hc service-1 (dry run)', 'delete anchor team-a/service-1 (dry run)']);
    expect(io.stdout).toContain('Admission: allowed (delete SubnamespaceAnchor team-a/service-1)');
    expect(io.stdout).toContain('which the real command allows first');
    await expect(runDelete(api, captureIo(), 'service-1', 'team-a', false, { dryRun: 'server', output: 'text' })).rejects.toThrow(
      /admission would refuse this change: subnamespace service-1 is not a leaf/,
    );
  });
});
