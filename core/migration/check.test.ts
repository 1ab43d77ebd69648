import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { PROPAGATION_VERBS } from '../config/access.js';
import {
  checkMigration,
  copyFindings,
  DEFAULT_GRANTED_KINDS,
  deploymentFindings,
  exitCode,
  ExitCode,
  grantedBy,
  HNC_TS_SELECTOR,
  HNC_TS_SERVICE_ACCOUNT,
  hrqFindings,
  propagationFindings,
} from './check.js';
import type { Grant, ManagerDeployment, MigrationInput } from './model.js';

interface Doc {
  kind?: string;
  metadata?: { name?: string; labels?: Record<string, string> };
  rules?: Grant['rules'];
  spec?: { selector?: { matchLabels?: Record<string, string> }; template?: { spec?: { serviceAccountName?: string } } };
}
const docs = (path: string): Doc[] =>
  parseAllDocuments(readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), 'utf8')).map((d) => d.toJS() as Doc);
const grantsIn = (path: string): Grant[] =>
  docs(path)
    .filter((d) => d.kind === 'ClusterRole' && d.metadata?.labels?.['hnc.x-k8s.io/aggregate-to-manager'] === 'true')
    .map((d) => ({ name: d.metadata!.name!, rules: d.rules ?? [] }));

const hncDeployment = (args: string[], serviceAccountName?: string): ManagerDeployment => ({
  namespace: 'hnc-system',
  name: 'hnc-controller-manager',
  selector: { 'control-plane': 'controller-manager' },
  args,
  ...(serviceAccountName ? { serviceAccountName } : {}),
});
const empty: MigrationInput = { kinds: null, grants: [], deployment: null, hrqCount: 0, copies: [] };

describe('the shipped RBAC and install', () => {
  it("DEFAULT_GRANTED_KINDS are exactly what deploy/rbac/manager.yaml's roles give the manager", () => {
    const grants = grantsIn('deploy/rbac/manager.yaml');
    for (const k of DEFAULT_GRANTED_KINDS) expect(grantedBy(grants, k), `${k.resource}`).toBeDefined();
    for (const k of [
      { group: '', resource: 'configmaps' },
      { group: '', resource: 'secrets' },
      { group: 'apps', resource: 'deployments' },
    ])
      expect(grantedBy(grants, k), k.resource).toBeUndefined();
  });

  it('the optional grants cover what the docs say', () => {
    const sc = grantsIn('deploy/optional/propagate-secrets-configmaps/clusterrole.yaml');
    expect(grantedBy(sc, { group: '', resource: 'configmaps' })).toEqual(['hnc-manager-secrets-configmaps']);
    expect(grantedBy(sc, { group: 'stable.example.com', resource: 'crontabs' })).toBeUndefined();
    const any = grantsIn('deploy/optional/propagate-any-kind/clusterrole.yaml');
    expect(grantedBy(any, { group: 'stable.example.com', resource: 'crontabs' })).toEqual(['hnc-manager-any-kind']);
  });

  it("HNC_TS_SELECTOR and the service account are hnc-ts's Deployment's", () => {
    const d = docs('deploy/manager/deployment.yaml').find((x) => x.kind === 'Deployment')!;
    expect(d.spec?.selector?.matchLabels).toEqual(HNC_TS_SELECTOR);
    expect(d.spec?.template?.spec?.serviceAccountName).toBe(HNC_TS_SERVICE_ACCOUNT);
  });
});

describe('grantedBy', () => {
  it('needs every propagation verb on every object: a rule limited to names, or missing a verb, does not do', () => {
    const kind = { group: '', resource: 'configmaps' };
    const reads: Grant = { name: 'reads', rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }] };
    const writes: Grant = {
      name: 'writes',
      rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['create', 'update', 'patch', 'delete'] }],
    };
    const named: Grant = { name: 'named', rules: [{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['x'], verbs: ['*'] }] };
    expect(grantedBy([reads], kind)).toBeUndefined();
    expect(grantedBy([named], kind)).toBeUndefined();
    expect(grantedBy([reads, writes], kind)).toEqual(['reads', 'writes']);
    expect(PROPAGATION_VERBS).toContain('watch');
  });
});

describe('propagationFindings', () => {
  const kinds = [
    { group: 'networking.k8s.io', resource: 'networkpolicies', mode: 'Propagate' },
    { group: '', resource: 'configmaps', mode: 'Propagate' },
    { group: '', resource: 'secrets', mode: 'Remove' },
    { group: 'stable.example.com', resource: 'crontabs', mode: 'AllowPropagate' },
    { group: 'apps', resource: 'deployments', mode: 'Ignore' },
  ];

  it('asks for a grant for each kind beyond the default RBAC, Remove included, Ignore not', () => {
    const [builtIn, missing, ...rest] = propagationFindings(kinds, []);
    expect(rest).toEqual([]);
    expect(builtIn).toMatchObject({ severity: 'ok', subject: 'roles rolebindings networkpolicies.networking.k8s.io' });
    expect(missing).toMatchObject({ severity: 'action', subject: 'configmaps secrets crontabs.stable.example.com' });
    expect(missing!.message).toMatch(/^configmaps \(Propagate\), secrets \(Remove\), crontabs.stable.example.com \(AllowPropagate\): /);
    expect(missing!.message).toContain('kubectl apply -k deploy/optional/propagate-any-kind (Helm: --set propagateAnyKind=true)');
    // One grant for Secrets and ConfigMaps (the guide's), one ClusterRole for the CRD.
    expect(missing!.commands).toEqual([
      'kubectl apply -k deploy/optional/propagate-secrets-configmaps',
      'kubectl create clusterrole hnc-manager-crontabs.stable.example.com --verb=get,list,watch,create,update,patch,delete ' +
        '--resource=crontabs.stable.example.com && kubectl label clusterrole hnc-manager-crontabs.stable.example.com hnc.x-k8s.io/aggregate-to-manager=true',
    ]);
    expect(missing!.helm).toEqual([
      `--set-json 'extraPropagatedResources=[{"apiGroup":"","resources":["configmaps","secrets"]},{"apiGroup":"stable.example.com","resources":["crontabs"]}]'`,
    ]);
  });

  it('counts a grant already made as done, and says when the grants could not be read', () => {
    const granted = propagationFindings(kinds.slice(0, 2), grantsIn('deploy/optional/propagate-secrets-configmaps/clusterrole.yaml'));
    expect(granted.map((f) => f.severity)).toEqual(['ok', 'ok']);
    expect(granted[1]!.message).toBe("configmaps (Propagate): granted to hnc-ts's manager by ClusterRole hnc-manager-secrets-configmaps");
    expect(propagationFindings(kinds.slice(1, 2), undefined)[1]!.message).toContain('the grants already made could not be read');
  });

  it('has only the RBAC kinds without an HNCConfiguration', () => {
    expect(propagationFindings(null, [])).toEqual([
      { area: 'propagation', severity: 'ok', subject: 'roles rolebindings', message: "roles, rolebindings: in hnc-ts's default RBAC" },
    ]);
  });
});

describe('deploymentFindings', () => {
  it("says HNC's Deployment goes first, the identity changes, and what its flags need", () => {
    const f = deploymentFindings(hncDeployment(['--managed-namespace-label=env']));
    expect(f.map((x) => [x.severity, x.subject])).toEqual([
      ['change', 'hnc-system/hnc-controller-manager'],
      ['change', 'serviceAccountName'],
      ['action', '--managed-namespace-label'],
    ]);
    expect(f[0]!.commands).toEqual([
      'kubectl delete validatingwebhookconfiguration hnc-validating-webhook-configuration',
      'kubectl delete mutatingwebhookconfiguration hnc-mutating-webhook-configuration',
      'kubectl -n hnc-system delete deployment hnc-controller-manager --cascade=foreground --wait',
    ]);
    expect(f[1]!.message).toContain(
      'from system:serviceaccount:hnc-system:default to system:serviceaccount:hnc-system:hnc-controller-manager',
    );
  });

  it("recognises hnc-ts's own Deployment, and says when there is none", () => {
    expect(deploymentFindings({ ...hncDeployment(['--bogus']), selector: { ...HNC_TS_SELECTOR } })).toMatchObject([{ severity: 'ok' }]);
    expect(deploymentFindings(null)).toMatchObject([{ severity: 'ok', area: 'deployment' }]);
  });
});

describe('hrqFindings', () => {
  it('asks for the HRQ variant when HRQs exist or HNC ran with --enable-hrq', () => {
    expect(hrqFindings(2, null)).toMatchObject([
      { severity: 'action', counts: { HierarchicalResourceQuota: 2 }, helm: ['--set hrq.enabled=true'] },
    ]);
    expect(hrqFindings(2, null)[0]!.message).toMatch(/^2 HierarchicalResourceQuotas exist: /);
    expect(hrqFindings(0, hncDeployment(['--enable-hrq']))[0]!.message).toMatch(/^HNC ran with --enable-hrq: /);
    expect(hrqFindings(undefined, hncDeployment(['--enable-hrq=false']))).toEqual([]);
    expect(hrqFindings(0, null)).toMatchObject([{ severity: 'ok' }]);
  });
});

describe('copyFindings', () => {
  const lastApplied = { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } };
  it('counts per kind the copies carrying keys hnc-ts does not copy (those it rewrites once)', () => {
    const [f] = copyFindings([
      { kind: 'NetworkPolicy', copies: [lastApplied, lastApplied, { labels: { team: 'a' } }] },
      { kind: 'ConfigMap', copies: [{ labels: { 'app.kubernetes.io/instance': 'x' } }] },
      { kind: 'Role', copies: [{}] },
    ]);
    expect(f).toMatchObject({ severity: 'change', counts: { NetworkPolicy: 2, ConfigMap: 1 } });
    expect(f!.message).toMatch(
      /^1 ConfigMap, 2 NetworkPolicy copies carry app.kubernetes.io\/instance, kubectl.kubernetes.io\/last-applied-configuration, /,
    );
  });

  it('is fine with clean copies, and silent when none could be listed', () => {
    expect(copyFindings([{ kind: 'Role', copies: [{ labels: { team: 'a' } }] }])).toMatchObject([{ severity: 'ok' }]);
    expect(copyFindings([])).toEqual([]);
  });
});

describe('checkMigration and its exit code', () => {
  it('is ready (0) for a cluster needing nothing, incomplete (3) with notes, action needed (2) otherwise', () => {
    const ready = checkMigration(empty);
    expect(ready.findings.every((f) => f.severity === 'ok')).toBe(true);
    expect(exitCode(ready)).toBe(ExitCode.Ready);
    expect(exitCode(checkMigration(empty, ['no permission to list hierarchicalresourcequotas']))).toBe(ExitCode.Incomplete);
    const hrq = checkMigration({ ...empty, hrqCount: 1 }, ['a note']);
    expect(exitCode(hrq)).toBe(ExitCode.ActionNeeded);
  });

  it('says nothing of what was not read', () => {
    const report = checkMigration({ kinds: undefined, grants: undefined, deployment: undefined, hrqCount: undefined, copies: [] });
    expect(report.findings).toEqual([]);
  });

  it('gathers the flags to carry over, and every Helm option the actions need', () => {
    const report = checkMigration({ ...empty, hrqCount: 1, deployment: hncDeployment(['--managed-namespace-label=env']) });
    expect(report.args).toEqual(['--managed-namespace-label=env']);
    expect(report.helm).toEqual(['--set hrq.enabled=true', `--set-json 'manager.extraArgs=["--managed-namespace-label=env"]'`]);
  });
});
