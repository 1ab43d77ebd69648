import { describe, expect, it } from 'vitest';
import { cli } from '../testing/cli.js';
import { FakeApi } from '../testing/fake-api.js';
import { managerDeployment } from './migrate.js';

const LAST_APPLIED = { 'kubectl.kubernetes.io/last-applied-configuration': '{}' };
const copy = (name: string, from: string, annotations?: Record<string, string>) => ({
  metadata: { name, labels: { 'hnc.x-k8s.io/inherited-from': from }, ...(annotations ? { annotations } : {}) },
});

/** A cluster as HNC v1.1.0 leaves it: ConfigMaps propagated, copies applied with kubectl, an HRQ, HNC's Deployment. */
function hncCluster(): FakeApi {
  const api = new FakeApi();
  api.config = {
    metadata: { name: 'config' },
    spec: {
      resources: [
        { group: 'networking.k8s.io', resource: 'networkpolicies', mode: 'Propagate' },
        { resource: 'configmaps', mode: 'Propagate' },
      ],
    },
    status: { resources: [{ group: 'networking.k8s.io', version: 'v1', resource: 'networkpolicies', mode: 'Propagate' }] },
  };
  api.objects.set('team-a/configmaps', [copy('settings', 'org', LAST_APPLIED), { metadata: { name: 'own', annotations: LAST_APPLIED } }]);
  api.objects.set('team-b/configmaps', [copy('settings', 'org', LAST_APPLIED)]);
  api.objects.set('team-a/networkpolicies', [copy('deny', 'org')]);
  api.objects.set('org/hierarchicalresourcequotas', [{ metadata: { name: 'org-quota' } }]);
  api.objects.set('hnc-system/deployments', [
    {
      metadata: { name: 'hnc-controller-manager' },
      spec: {
        selector: { matchLabels: { 'control-plane': 'controller-manager' } },
        template: {
          spec: {
            containers: [{ name: 'manager', command: ['/manager'], args: ['--max-reconciles=10', '--managed-namespace-label=env'] }],
          },
        },
      },
    },
  ]);
  api.discovery.set('/v1', [{ name: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: [] }]);
  api.discovery.set('networking.k8s.io/v1', [{ name: 'networkpolicies', kind: 'NetworkPolicy', namespaced: true, verbs: [] }]);
  return api;
}

describe('kubectl hns migrate --check', () => {
  it('prints what needs doing first, with the commands, and exits 2', async () => {
    const { code, stdout, stderr } = await cli(['migrate', '--check'], hncCluster());
    expect(stderr).toBe('');
    expect(code).toBe(2);
    const lines = stdout.split('\n');
    // Actions first: the kind to grant, HRQ, the flag; then the changes; then what is carried over.
    expect(lines.filter((l) => /^(ACTION|CHANGE|OK) /.test(l)).map((l) => l.slice(0, 22).trimEnd())).toEqual([
      'ACTION  propagation',
      'ACTION  flags',
      'ACTION  hrq',
      'CHANGE  deployment',
      'CHANGE  deployment',
      'CHANGE  copies',
      'OK      propagation',
      'OK      flags',
    ]);
    expect(lines.at(-2)).toBe("3 actions needed before the swap (exit code 2). The swap's steps: docs/migrating-from-hnc.md");
    expect(stdout).toContain('\n                      $ kubectl apply -k deploy/optional/propagate-secrets-configmaps\n');
    expect(stdout).toContain(
      '\n                      $ kubectl -n hnc-system delete deployment hnc-controller-manager --cascade=foreground --wait\n',
    );
    expect(stdout).toContain(
      'CHANGE  copies        2 ConfigMap copies carry kubectl.kubernetes.io/last-applied-configuration, which hnc-ts never copies',
    );
    expect(stdout).toContain(
      "\nFlags for hnc-ts's manager (add them to its container's args in deploy/manager/deployment.yaml before npm run build:install):\n  --managed-namespace-label=env\n",
    );
    expect(stdout).toContain(
      `  helm install hnc charts/hnc --namespace hnc-system --set-json 'extraPropagatedResources=[{"apiGroup":"","resources":["configmaps"]}]' --set hrq.enabled=true --set-json 'manager.extraArgs=["--managed-namespace-label=env"]'\n`,
    );
  });

  it('-o json: the same findings for a script', async () => {
    const { code, stdout } = await cli(['migrate', '--check', '-o', 'json'], hncCluster());
    expect(code).toBe(2);
    const doc = JSON.parse(stdout) as {
      actionNeeded: boolean;
      findings: { area: string; severity: string; subject?: string; counts?: object }[];
    };
    expect(doc.actionNeeded).toBe(true);
    expect(doc.findings.filter((f) => f.severity === 'action').map((f) => f.subject)).toEqual([
      'configmaps',
      '--managed-namespace-label',
      '--enable-hrq',
    ]);
    expect(doc.findings.find((f) => f.area === 'copies')?.counts).toEqual({ ConfigMap: 2 });
    expect(doc.findings.find((f) => f.area === 'hrq')?.counts).toEqual({ HierarchicalResourceQuota: 1 });
  });

  it('exits 0 once everything is done: the grant made, no HRQ, no flag to carry', async () => {
    const api = hncCluster();
    api.objects.delete('org/hierarchicalresourcequotas');
    api.objects.delete('hnc-system/deployments');
    api.objects.set('/clusterroles', [
      {
        metadata: { name: 'hnc-manager-secrets-configmaps', labels: { 'hnc.x-k8s.io/aggregate-to-manager': 'true' } },
        rules: [
          { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
        ],
      },
    ]);
    const { code, stdout } = await cli(['migrate', '--check'], api);
    expect(stdout).toContain(
      "OK      propagation   configmaps (Propagate): granted to hnc-ts's manager by ClusterRole hnc-manager-secrets-configmaps\n",
    );
    expect(stdout.trimEnd().split('\n').at(-1)).toBe("Nothing needs doing before the swap. The swap's steps: docs/migrating-from-hnc.md");
    expect(code).toBe(0);
  });

  it('notes the reads it may not make, and exits 3 when nothing else is found', async () => {
    const api = new FakeApi();
    api.forbidden.add('list hierarchicalresourcequotas *');
    api.forbidden.add('get deployments hnc-system/hnc-controller-manager');
    api.forbidden.add('table roles *');
    const { code, stdout, stderr } = await cli(['migrate', '--check'], api);
    expect(stderr).toBe(
      [
        'Note: no permission to read Deployment hnc-system/hnc-controller-manager: not checked',
        'Note: no permission to list HierarchicalResourceQuotas: not checked',
        'Note: no permission to list roles.rbac.authorization.k8s.io cluster-wide (their copies): not checked',
        '',
      ].join('\n'),
    );
    expect(stdout).not.toContain('hrq');
    expect(code).toBe(3);
  });

  it('reads HNC in the namespace -n names', async () => {
    const api = new FakeApi();
    await cli(['migrate', '--check', '-n', 'hnc'], api);
    expect(api.calls).toContain('get deployments hnc/hnc-controller-manager');
  });

  it('refuses to run without --check, before connecting', async () => {
    const { code, stderr, flags } = await cli(['migrate'], new FakeApi());
    expect(code).toBe(1);
    expect(flags).toEqual([]);
    expect(stderr).toContain('Error: migrate only checks a cluster before the swap: run it with --check');
  });
});

describe('managerDeployment', () => {
  it("takes the flags of the container named manager, the command's after the program too", () => {
    const d = managerDeployment('hnc-system', {
      metadata: { name: 'hnc-controller-manager' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: {
          spec: {
            serviceAccountName: 'default',
            containers: [
              { name: 'proxy', args: ['--x'] },
              { name: 'manager', command: ['/manager', '--enable-hrq'], args: ['--max-reconciles=3'] },
            ],
          },
        },
      },
    });
    expect(d).toEqual({
      namespace: 'hnc-system',
      name: 'hnc-controller-manager',
      selector: { a: 'b' },
      serviceAccountName: 'default',
      args: ['--enable-hrq', '--max-reconciles=3'],
    });
  });
});
