// The Helm chart (charts/hnc), rendered by a real helm (built from its Go module by
// scripts/build-helm.sh): its default rendering is dist/install.yaml's objects (with hrq.enabled,
// dist/install-hrq.yaml's), each deeply equal once Helm's own labels are removed, less the
// Namespace, which is the release's (Helm creates it with --create-namespace); its values reach the
// objects and the manager's flags; its CRDs are the repository's; `helm lint` passes.
import { spawnSync } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { parseManagerFlags } from '../cmd/flags.js';
import { Webhook } from '../core/api/constants.js';
import { readManifests } from '../kube/apply.js';
import { findHelm } from '../scripts/helm.js';
import { DEPLOY_HRQ_KUSTOMIZATION, DEPLOY_KUSTOMIZATION, renderInstall, type RenderedObject } from '../scripts/build-install.js';
import { mutatingConfiguration, validatingConfiguration } from '../webhooks/configurations.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CHART = join(ROOT, 'charts', 'hnc');

/** The labels the chart adds for Helm's tooling (charts/hnc/templates/_helpers.tpl, "hnc.helmLabels"). */
const HELM_LABELS = ['helm.sh/chart', 'app.kubernetes.io/managed-by', 'app.kubernetes.io/instance'];

interface Obj extends RenderedObject {
  metadata: RenderedObject['metadata'] & { annotations?: Record<string, string> };
}
interface Container {
  image: string;
  imagePullPolicy?: string;
  args: string[];
  env: Array<{ name: string; value?: string }>;
  resources?: unknown;
}
interface PodSpec {
  containers: Container[];
  priorityClassName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: unknown[];
  affinity?: unknown;
  topologySpreadConstraints?: unknown[];
  imagePullSecrets?: Array<{ name: string }>;
}
interface Deployment extends Obj {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string>; annotations: Record<string, string> }; spec: PodSpec };
  };
}
interface ClusterRole extends Obj {
  rules?: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
  aggregationRule?: { clusterRoleSelectors: Array<{ matchLabels: Record<string, string> }> };
}

/** Each test runs helm a few times (about 0.2 s each here, far more on a loaded machine). */
const HELM_TIMEOUT = 120_000;

let helm = '';
beforeAll(async () => {
  // A no-op once built; a cold build (a fresh machine running this file alone) takes minutes.
  helm = await findHelm();
}, 40 * 60_000);

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(helm, args, {
    encoding: 'utf8',
    env: { ...process.env, HELM_CACHE_HOME: '/nonexistent', HELM_CONFIG_HOME: '/nonexistent' },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `helm template` with --set-json values; the objects it renders (CRDs included). */
function template(values: Record<string, unknown> = {}, namespace = 'hnc-system'): Obj[] {
  const sets = Object.entries(values).flatMap(([k, v]) => ['--set-json', `${k}=${JSON.stringify(v)}`]);
  const r = run(['template', 'hnc', CHART, '--namespace', namespace, '--include-crds', ...sets]);
  if (r.status !== 0) throw new Error(`helm template failed (exit ${r.status}): ${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJSON() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

/** helm template's error for values it must refuse. */
function refused(values: Record<string, unknown>, namespace = 'hnc-system'): string {
  const sets = Object.entries(values).flatMap(([k, v]) => ['--set-json', `${k}=${JSON.stringify(v)}`]);
  const r = run(['template', 'hnc', CHART, '--namespace', namespace, ...sets]);
  expect(r.status, r.stdout).not.toBe(0);
  return r.stderr;
}

const id = (o: Obj) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** The object without the chart's Helm labels (and without `labels` if nothing else was there). */
function withoutHelmLabels(o: Obj): Obj {
  const labels = Object.fromEntries(Object.entries(o.metadata.labels ?? {}).filter(([k]) => !HELM_LABELS.includes(k)));
  const { labels: _, ...metadata } = o.metadata;
  return { ...o, metadata: Object.keys(labels).length ? { ...metadata, labels } : metadata };
}

const find = <T extends Obj>(objects: Obj[], kind: string, name: string): T => {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind} ${name} in ${objects.map(id).join(', ')}`);
  return o as T;
};
const deploymentOf = (objects: Obj[]) => find<Deployment>(objects, 'Deployment', 'hnc-controller-manager');
const managerOf = (objects: Obj[]) => deploymentOf(objects).spec.template.spec.containers[0]!;

/** The webhook configurations the manager would write with the flags the chart gives it (as webhooks/index.ts does). */
function webhooksFor(objects: Obj[]) {
  const flags = parseManagerFlags(managerOf(objects).args);
  const input = {
    endpoint: { service: { namespace: flags.namespace, name: 'hnc-webhook-service' } },
    excludedNamespaces: [...flags.policy.excluded],
    objectRules: [],
    manager: { namespace: flags.namespace },
    hrq: flags.hrq !== undefined,
  };
  const validating = validatingConfiguration(input) as unknown as { webhooks: Array<{ name: string; namespaceSelector?: unknown }> };
  const mutating = mutatingConfiguration(input) as unknown as { webhooks: Array<{ name: string; namespaceSelector?: unknown }> };
  return { flags, webhooks: [...validating.webhooks, ...mutating.webhooks] };
}
const notIn = (values: string[]) => ({
  matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [...values].sort() }],
});

describe('charts/hnc, default values', { timeout: HELM_TIMEOUT }, () => {
  it.each([
    { variant: 'dist/install.yaml', values: {}, kustomization: DEPLOY_KUSTOMIZATION },
    { variant: 'dist/install-hrq.yaml (hrq.enabled)', values: { hrq: { enabled: true } }, kustomization: DEPLOY_HRQ_KUSTOMIZATION },
  ])('renders the objects of $variant, less the release Namespace, each equal but for Helm labels', ({ values, kustomization }) => {
    const chart = template(values);
    const install = renderInstall({ kustomization }).objects as Obj[];
    const expected = install.filter((o) => o.kind !== 'Namespace');
    // The one object left out is the namespace Helm installs into (--create-namespace).
    expect(install.filter((o) => o.kind === 'Namespace').map(id)).toEqual(['Namespace//hnc-system']);
    expect(chart.map(id).sort()).toEqual(expected.map(id).sort());
    const byId = new Map(chart.map((o) => [id(o), withoutHelmLabels(o)]));
    for (const o of expected) expect(byId.get(id(o)), id(o)).toEqual(o);
  });

  it('labels every templated object for Helm, and no selector or pod template', () => {
    const chart = template().filter((o) => o.kind !== 'CustomResourceDefinition');
    for (const o of chart) expect(Object.keys(o.metadata.labels ?? {}), id(o)).toEqual(expect.arrayContaining(HELM_LABELS));
    const d = deploymentOf(chart);
    for (const labels of [d.spec.selector.matchLabels, d.spec.template.metadata.labels])
      expect(Object.keys(labels).filter((k) => HELM_LABELS.includes(k))).toEqual([]);
  });

  it('has the version of package.json, and its image tag', () => {
    const chart = parse(readFileSync(join(CHART, 'Chart.yaml'), 'utf8')) as { name: string; version: string; appVersion: string };
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(chart).toMatchObject({ name: 'hnc', version: pkg.version, appVersion: pkg.version });
    expect(managerOf(template()).image).toBe(`hnc-ts:${pkg.version}`);
  });

  it('ships crds/ as the repository has them (links, so they cannot drift)', () => {
    const repo = readdirSync(join(ROOT, 'crds')).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    const charted = readdirSync(join(CHART, 'crds'));
    expect(charted.sort()).toEqual(repo.sort());
    for (const f of charted) {
      expect(lstatSync(join(CHART, 'crds', f)).isSymbolicLink(), `charts/hnc/crds/${f} is a link to crds/${f}`).toBe(true);
      expect(readFileSync(join(CHART, 'crds', f), 'utf8')).toBe(readFileSync(join(ROOT, 'crds', f), 'utf8'));
    }
  });

  it('passes helm lint --strict, with default and with every optional part on', () => {
    const plain = run(['lint', '--strict', CHART, '--namespace', 'hnc-system']);
    expect(plain.status, plain.stdout + plain.stderr).toBe(0);
    const all = run([
      'lint',
      '--strict',
      CHART,
      '--namespace',
      'hnc-system',
      '--set-json',
      'hrq={"enabled":true,"syncInterval":"30s"}',
      '--set-json',
      'extraPropagatedResources=[{"apiGroup":"","resources":["secrets"]}]',
      '--set-json',
      'propagateAnyKind=true',
      '--set-json',
      'networkPolicy={"enabled":true,"apiServerCIDRs":["10.0.0.0/24"],"nodeCIDRs":["10.1.0.0/24"]}',
    ]);
    expect(all.status, all.stdout + all.stderr).toBe(0);
  });
});

describe('charts/hnc values', { timeout: HELM_TIMEOUT }, () => {
  it('replicas: the Deployment, and a PodDisruptionBudget only with two or more', () => {
    const three = template({ replicas: 3 });
    expect(deploymentOf(three).spec.replicas).toBe(3);
    expect(find(three, 'PodDisruptionBudget', 'hnc-controller-manager')).toBeDefined();
    const one = template({ replicas: 1 });
    expect(deploymentOf(one).spec.replicas).toBe(1);
    expect(one.filter((o) => o.kind === 'PodDisruptionBudget')).toEqual([]);
    expect(refused({ replicas: 0 })).toMatch(/replicas/);
  });

  it('hncExcludeNamespaces: the manager excludes them (and its own namespace), and so do its webhooks', () => {
    const objects = template({ hncExcludeNamespaces: ['kube-system', 'legacy-apps'] });
    const { flags, webhooks } = webhooksFor(objects);
    expect([...flags.policy.excluded].sort()).toEqual(['hnc-system', 'kube-system', 'legacy-apps']);
    const namespaces = webhooks.find((w) => w.name === Webhook.namespaces.name)!;
    expect(namespaces.namespaceSelector).toEqual(notIn(['hnc-system', 'kube-system', 'legacy-apps']));
    const mutator = webhooks.find((w) => w.name === Webhook.namespaceMutator.name)!;
    expect(mutator.namespaceSelector).toEqual(notIn(['hnc-system', 'kube-system', 'legacy-apps']));
    // The defaults are HNC's.
    expect([...webhooksFor(template()).flags.policy.excluded].sort()).toEqual([
      'hnc-system',
      'kube-node-lease',
      'kube-public',
      'kube-system',
    ]);
    // An empty list would silently mean the manager's defaults: refused.
    expect(refused({ hncExcludeNamespaces: [] })).toMatch(/hncExcludeNamespaces/);
    expect(refused({ hncExcludeNamespaces: ['Not_A_Name'] })).toMatch(/hncExcludeNamespaces/);
  });

  it('hrq.enabled: --enable-hrq (and its interval), so the HRQ webhooks are registered; off by default', () => {
    const off = webhooksFor(template());
    expect(off.flags.hrq).toBeUndefined();
    expect(off.webhooks.map((w) => w.name)).not.toContain(Webhook.hrq.name);
    const on = webhooksFor(template({ hrq: { enabled: true, syncInterval: '30s' } }));
    expect(on.flags.hrq).toEqual({ syncIntervalMs: 30_000 });
    expect(on.webhooks.map((w) => w.name)).toEqual(
      expect.arrayContaining([Webhook.hrq.name, Webhook.resourceQuotaStatus.name, Webhook.hrqQuantities.name]),
    );
    expect(webhooksFor(template({ hrq: { enabled: true } })).flags.hrq).toEqual({ syncIntervalMs: 60_000 });
    expect(refused({ hrq: { enabled: true, syncInterval: 'soon' } })).toMatch(/syncInterval/);
  });

  it('extraPropagatedResources: one ClusterRole aggregated into the manager role', () => {
    const objects = template({
      extraPropagatedResources: [
        { apiGroup: '', resources: ['secrets', 'configmaps'] },
        { apiGroup: 'example.com', resources: ['widgets'] },
      ],
    });
    const extra = find<ClusterRole>(objects, 'ClusterRole', 'hnc-manager-extra-propagation');
    expect(extra.rules).toEqual([
      { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
      { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
    ]);
    const manager = find<ClusterRole>(objects, 'ClusterRole', 'hnc-manager-role');
    const selects = manager.aggregationRule!.clusterRoleSelectors.some((s) =>
      Object.entries(s.matchLabels).every(([k, v]) => extra.metadata.labels?.[k] === v),
    );
    expect(selects).toBe(true);
    // The same grant as deploy/optional/propagate-secrets-configmaps, for those two kinds.
    const [optional] = readManifests(join(ROOT, 'deploy', 'optional', 'propagate-secrets-configmaps', 'clusterrole.yaml')) as ClusterRole[];
    expect(extra.rules![0]).toEqual(optional!.rules![0]);
    expect(template().filter((o) => o.metadata.name === 'hnc-manager-extra-propagation')).toEqual([]);
    expect(refused({ extraPropagatedResources: [{ apiGroup: '' }] })).toMatch(/resources/);
  });

  it('propagateAnyKind: the ClusterRole of deploy/optional/propagate-any-kind, aggregated into the manager role; off by default', () => {
    const objects = template({ propagateAnyKind: true });
    const anyKind = find<ClusterRole>(objects, 'ClusterRole', 'hnc-manager-any-kind');
    const [optional] = readManifests(join(ROOT, 'deploy', 'optional', 'propagate-any-kind', 'clusterrole.yaml')) as ClusterRole[];
    expect(withoutHelmLabels(anyKind)).toEqual(optional);
    expect(optional!.rules).toEqual([
      { apiGroups: ['*'], resources: ['*'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
    ]);
    const manager = find<ClusterRole>(objects, 'ClusterRole', 'hnc-manager-role');
    const selects = manager.aggregationRule!.clusterRoleSelectors.some((s) =>
      Object.entries(s.matchLabels).every(([k, v]) => anyKind.metadata.labels?.[k] === v),
    );
    expect(selects).toBe(true);
    expect(template().filter((o) => o.metadata.name === 'hnc-manager-any-kind')).toEqual([]);
    expect(refused({ propagateAnyKind: 'yes' })).toMatch(/propagateAnyKind/);
  });

  it('image, pull secrets, log level, resources, scheduling and pod metadata reach the pod', () => {
    const objects = template({
      image: { repository: 'registry.example/hnc-ts', tag: 'v9', pullPolicy: 'Always' },
      imagePullSecrets: ['regcred'],
      manager: {
        logLevel: 'debug',
        resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { memory: '2Gi' } },
        maxOldSpaceSizeMi: 1536,
        priorityClassName: 'system-cluster-critical',
        nodeSelector: { 'node-role.kubernetes.io/control-plane': '' },
        tolerations: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule', operator: 'Exists' }],
        affinity: null,
        podAnnotations: { 'example.com/team': 'platform' },
        podLabels: { team: 'platform' },
        extraArgs: ['--included-namespace-regex=team-.*', '--max-reconciles=20'],
      },
    });
    const d = deploymentOf(objects);
    const pod = d.spec.template.spec;
    const c = pod.containers[0]!;
    expect(c.image).toBe('registry.example/hnc-ts:v9');
    expect(c.imagePullPolicy).toBe('Always');
    expect(pod.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    expect(c.env).toEqual(
      expect.arrayContaining([
        { name: 'HNC_LOG_LEVEL', value: 'debug' },
        { name: 'NODE_OPTIONS', value: '--max-old-space-size=1536' },
      ]),
    );
    expect(c.resources).toEqual({ requests: { cpu: '1', memory: '1Gi' }, limits: { memory: '2Gi' } });
    expect(pod.priorityClassName).toBe('system-cluster-critical');
    expect(pod.nodeSelector).toEqual({ 'node-role.kubernetes.io/control-plane': '' });
    expect(pod.tolerations).toHaveLength(1);
    expect(pod.affinity).toBeUndefined();
    expect(pod.topologySpreadConstraints).toHaveLength(1);
    expect(d.spec.template.metadata.annotations).toMatchObject({ 'example.com/team': 'platform', 'prometheus.io/scrape': 'true' });
    expect(d.spec.template.metadata.labels).toMatchObject({ team: 'platform', 'control-plane': 'controller-manager' });
    expect(d.spec.selector.matchLabels).not.toHaveProperty('team');
    // Extra flags come last: for a one-value flag, the last one given wins.
    const flags = parseManagerFlags(c.args);
    expect(flags.workers).toBe(20);
    expect(flags.policy.isManaged('team-a')).toBe(true);
    expect(flags.policy.isManaged('other')).toBe(false);
    expect(managerOf(template({ image: { digest: 'sha256:' + 'a'.repeat(64) } })).image).toBe(`hnc-ts@sha256:${'a'.repeat(64)}`);
    expect(refused({ manager: { logLevel: 'loud' } })).toMatch(/logLevel/);
    expect(refused({ manager: { extraArgs: ['max-reconciles=3'] } })).toMatch(/extraArgs/);
  });

  it('refuses a misspelt value instead of ignoring it', () => {
    expect(refused({ replica: 3 })).toMatch(/replica/);
    expect(refused({ manager: { resource: {} } })).toMatch(/resource/);
  });

  it('installs into another namespace: every namespaced object there, and the manager told (--namespace)', () => {
    const objects = template({}, 'platform-hnc');
    const namespaced = objects.filter((o) => o.metadata.namespace !== undefined);
    expect(namespaced.length).toBeGreaterThan(5);
    expect(namespaced.filter((o) => o.metadata.namespace !== 'platform-hnc').map(id)).toEqual([]);
    const binding = find<Obj & { subjects: Array<{ namespace: string }> }>(objects, 'ClusterRoleBinding', 'hnc-manager-rolebinding');
    expect(binding.subjects[0]!.namespace).toBe('platform-hnc');
    const { flags, webhooks } = webhooksFor(objects);
    expect(flags.namespace).toBe('platform-hnc');
    expect(webhooks.find((w) => w.name === Webhook.namespaces.name)!.namespaceSelector).toEqual(
      notIn(['kube-node-lease', 'kube-public', 'kube-system', 'platform-hnc']),
    );
    // "default" would silently leave its workloads out of every hierarchy: refused.
    expect(refused({}, 'default')).toMatch(/namespace of its own/);
  });

  it('networkPolicy: off by default; on, the policy of deploy/network-policy with the given addresses', () => {
    expect(template().filter((o) => o.kind === 'NetworkPolicy')).toEqual([]);
    const objects = template({ networkPolicy: { enabled: true, apiServerCIDRs: ['192.0.2.0/24'], nodeCIDRs: ['192.0.2.0/24'] } });
    const [shipped] = readManifests(join(ROOT, 'deploy', 'network-policy', 'hnc-ingress.yaml')) as Obj[];
    expect(withoutHelmLabels(find(objects, 'NetworkPolicy', 'hnc-controller-manager'))).toEqual(shipped);
    expect(refused({ networkPolicy: { enabled: true } })).toMatch(/apiServerCIDRs/);
  });
});
