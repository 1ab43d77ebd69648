// deploy/ and what is built from it: the kustomization renders (without kustomize) into the same
// objects the tests apply, the Deployment's args are flags the manager accepts and its ports,
// probes and Services agree with them, the pod is locked down, and the Dockerfile agrees with
// tsconfig.build.json and the pod's user.
import { shippedNodeEnv, shippedNodeFlags } from '../bench/node-flags.js';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parseManagerFlags } from '../cmd/flags.js';
import { readManifests } from '../kube/apply.js';
import { AGGREGATED_ROLES, MANAGER_RBAC, MANAGER_SERVICE_ACCOUNT, loadCrds } from '../kube/install.js';
import { reachable } from '../scripts/import-graph.js';
import { DEPLOY_HRQ_KUSTOMIZATION, renderInstall, VARIANTS, writeInstall, type RenderedObject } from '../scripts/build-install.js';
import { mutatingConfiguration, validatingConfiguration } from '../webhooks/configurations.js';
import { Webhook } from '../core/api/constants.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const NS = MANAGER_SERVICE_ACCOUNT.namespace;

interface Probe {
  httpGet: { path: string; port: string | number };
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: Array<{ name: string; value?: string }>;
  ports?: Array<{ name: string; containerPort: number }>;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    runAsNonRoot?: boolean;
    capabilities?: { drop?: string[]; add?: string[] };
  };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}
interface PodSpec {
  serviceAccountName?: string;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
  containers: Container[];
  affinity?: { podAntiAffinity?: unknown };
  topologySpreadConstraints?: unknown[];
}
interface Deployment extends RenderedObject {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}
interface Service extends RenderedObject {
  spec: { selector: Record<string, string>; ports: Array<{ name: string; port: number; targetPort: string | number }> };
}

const rendered = renderInstall();
const objects = rendered.objects;
const find = <T extends RenderedObject>(kind: string, name: string) => {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`install.yaml has no ${kind} ${name}`);
  return o as T;
};
const id = (o: { kind: string; metadata: { name: string; namespace?: string } }) =>
  `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const deployment = find<Deployment>('Deployment', 'hnc-controller-manager');
const pod = deployment.spec.template.spec;
const manager = pod.containers.find((c) => c.name === 'manager')!;
const portNamed = (name: string | number) => (typeof name === 'number' ? name : manager.ports?.find((p) => p.name === name)?.containerPort);
const selects = (selector: Record<string, string>) =>
  Object.entries(selector).every(([k, v]) => deployment.spec.template.metadata.labels[k] === v);
const mebibytes = (q: string) => {
  const m = /^(\d+)(Mi|Gi)$/.exec(q);
  if (!m) throw new Error(`unexpected quantity ${q}`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
};

describe('deploy/ renders into dist/install.yaml', () => {
  it('holds the CRDs and exactly the RBAC the tests apply', () => {
    const shipped = new Set(objects.map(id));
    for (const o of [...loadCrds(), ...readManifests(MANAGER_RBAC, AGGREGATED_ROLES)]) expect(shipped, id(o)).toContain(id(o));
    const fromTests = new Map(readManifests(MANAGER_RBAC, AGGREGATED_ROLES).map((o) => [id(o), o]));
    for (const o of objects.filter((x) => fromTests.has(id(x)))) expect(o).toEqual(fromTests.get(id(o)));
  });

  it('orders namespaces and CRDs first, and ships no webhook configuration (the manager writes them)', () => {
    expect(objects[0]!.kind).toBe('Namespace');
    const firstOther = objects.findIndex((o) => o.kind !== 'Namespace' && o.kind !== 'CustomResourceDefinition');
    expect(objects.slice(firstOther).some((o) => o.kind === 'Namespace' || o.kind === 'CustomResourceDefinition')).toBe(false);
    expect(objects.filter((o) => o.kind.endsWith('WebhookConfiguration'))).toEqual([]);
    expect(objects.filter((o) => o.metadata.namespace && o.metadata.namespace !== NS).map(id)).toEqual([]);
  });

  it('keeps the comments and parses back to the same objects', async () => {
    expect(rendered.yaml).toContain('escalation trade-off');
    const { parseAllDocuments } = await import('yaml');
    expect(parseAllDocuments(rendered.yaml).map((d) => d.toJSON() as unknown)).toEqual(objects);
  });

  it('sets the image from the kustomization, or from --image', () => {
    expect(manager.image).toMatch(/^hnc-ts:\d+\.\d+\.\d+/);
    const other = renderInstall({ image: 'registry.example/hnc-ts:v9' }).objects.find((o) => o.kind === 'Deployment') as Deployment;
    expect(other.spec.template.spec.containers[0]!.image).toBe('registry.example/hnc-ts:v9');
  });
});

describe('the HRQ variant: deploy/hrq renders into dist/install-hrq.yaml (HNC ships it as hrq.yaml)', () => {
  const hrq = renderInstall({ kustomization: DEPLOY_HRQ_KUSTOMIZATION }).objects;
  const hrqDeployment = hrq.find((o) => o.kind === 'Deployment') as Deployment;
  const hrqArgs = hrqDeployment.spec.template.spec.containers.find((c) => c.name === 'manager')!.args ?? [];

  it('is the default install with one more manager flag, --enable-hrq', () => {
    expect(hrq.map(id)).toEqual(objects.map(id));
    expect(hrqArgs).toEqual([...(manager.args ?? []), '--enable-hrq']);
    const withoutFlag = structuredClone(hrqDeployment);
    withoutFlag.spec.template.spec.containers[0]!.args = manager.args;
    expect(withoutFlag).toEqual(deployment);
    for (const o of hrq.filter((x) => x.kind !== 'Deployment')) expect(o).toEqual(objects.find((x) => id(x) === id(o)));
  });

  it('turns HRQ on in the manager, which then registers the HRQ webhooks; the default install does not', () => {
    const on = parseManagerFlags(hrqArgs);
    expect(on.hrq).toEqual({ syncIntervalMs: 60_000 });
    expect(parseManagerFlags(manager.args ?? []).hrq).toBeUndefined();
    const names = (hrqOn: boolean) => {
      const input = {
        endpoint: { url: 'https://hnc.example' },
        excludedNamespaces: [],
        objectRules: [],
        manager: { namespace: NS },
        hrq: hrqOn,
      };
      const hooks = (m: object) => ((m as { webhooks: Array<{ name: string }> }).webhooks ?? []).map((w) => w.name);
      return [...hooks(validatingConfiguration(input)), ...hooks(mutatingConfiguration(input))];
    };
    const hrqHooks = [Webhook.hrq.name, Webhook.hrqQuantities.name, Webhook.resourceQuotaStatus.name];
    expect(names(on.hrq !== undefined)).toEqual(expect.arrayContaining(hrqHooks));
    expect(names(false).filter((n) => hrqHooks.includes(n as (typeof hrqHooks)[number]))).toEqual([]);
  });

  it('gives the manager the POD_IP followers forward usage raises to (docs/hrq.md), and its POD_UID', () => {
    const env = hrqDeployment.spec.template.spec.containers[0]!.env as Array<{
      name: string;
      valueFrom?: { fieldRef?: { fieldPath: string } };
    }>;
    expect(env.find((e) => e.name === 'POD_IP')?.valueFrom?.fieldRef?.fieldPath).toBe('status.podIP');
    expect(env.find((e) => e.name === 'POD_UID')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.uid');
  });

  it('is written by writeInstall with a header naming its kustomization, and parses back to the same objects', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hnc-install-'));
    try {
      const out = join(dir, 'install-hrq.yaml');
      const wrote = writeInstall({ variant: 'hrq', out, image: 'registry.example/hnc-ts:v9' });
      expect(wrote).toEqual({ out, objects: hrq.length, image: 'registry.example/hnc-ts:v9' });
      const text = readFileSync(out, 'utf8');
      expect(text).toContain('from deploy/hrq/kustomization.yaml');
      expect(text).toContain('kubectl apply --server-side -f install-hrq.yaml');
      const { parseAllDocuments } = await import('yaml');
      const parsed = parseAllDocuments(text).map((d) => d.toJSON() as RenderedObject);
      expect(parsed.map(id)).toEqual(hrq.map(id));
      expect(JSON.stringify(parsed)).toContain('registry.example/hnc-ts:v9');
      expect(VARIANTS.hrq.out.endsWith('dist/install-hrq.yaml')).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the renderer refuses what it does not understand (so it never differs from kustomize silently)', () => {
  const render = (kustomization: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'hnc-kustomize-'));
    try {
      writeFileSync(join(dir, 'kustomization.yaml'), kustomization);
      writeFileSync(
        join(dir, 'deployment.yaml'),
        'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: m, namespace: x}\nspec: {template: {spec: {containers: [{name: c, image: i, args: [--a]}]}}}\n',
      );
      return renderInstall({ kustomization: join(dir, 'kustomization.yaml') }).objects;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const withPatch = (target: string, ops: string) =>
    `resources: [deployment.yaml]\npatches:\n  - target: ${target}\n    patch: |-\n${ops
      .split('\n')
      .map((l) => `      ${l}`)
      .join('\n')}\n`;
  const args = (objs: RenderedObject[]) => (objs[0]!.spec as PodSpec & { template: { spec: PodSpec } }).template.spec.containers[0]!.args;

  it('applies add (at the end, at a position, to a map), replace and remove', () => {
    expect(
      args(render(withPatch('{kind: Deployment, name: m}', '- {op: add, path: /spec/template/spec/containers/0/args/-, value: --b}'))),
    ).toEqual(['--a', '--b']);
    expect(
      args(render(withPatch('{kind: Deployment, name: m}', '- {op: add, path: /spec/template/spec/containers/0/args/0, value: --z}'))),
    ).toEqual(['--z', '--a']);
    const replaced = render(
      withPatch(
        '{kind: Deployment, name: m}',
        '- {op: replace, path: /spec/template/spec/containers/0/image, value: j}\n- {op: add, path: /spec/replicas, value: 3}',
      ),
    )[0]!;
    expect(replaced.spec).toMatchObject({ replicas: 3, template: { spec: { containers: [{ image: 'j' }] } } });
    expect(args(render(withPatch('{kind: Deployment, name: m}', '- {op: remove, path: /spec/template/spec/containers/0/args/0}')))).toEqual(
      [],
    );
  });

  it('refuses an unknown field, an unknown operation, a target matching nothing, and a replace of nothing', () => {
    expect(() => render('resources: [deployment.yaml]\nnamePrefix: x-\n')).toThrow(/does not understand namePrefix/);
    expect(() => render(withPatch('{kind: Deployment, name: m}', '- {op: move, from: /a, path: /b}'))).toThrow(
      /operation "move" is not understood/,
    );
    expect(() => render(withPatch('{kind: Deployment, name: other}', '- {op: add, path: /spec/x, value: 1}'))).toThrow(
      /0 objects match Deployment other/,
    );
    expect(() => render(withPatch('{kind: Deployment, name: m}', '- {op: replace, path: /spec/nothing, value: 1}'))).toThrow(
      /nothing there/,
    );
    expect(() => render(withPatch('{labelSelector: a=b}', '- {op: add, path: /spec/x, value: 1}'))).toThrow(/target kind and name/);
  });
});

describe('the manager Deployment', () => {
  it('runs two replicas as the service account bound by deploy/rbac', () => {
    expect(deployment.metadata.namespace).toBe(NS);
    expect(deployment.spec.replicas).toBe(2);
    expect(pod.serviceAccountName).toBe(MANAGER_SERVICE_ACCOUNT.name);
    expect(selects(deployment.spec.selector.matchLabels)).toBe(true);
  });

  it('passes only flags the manager accepts, with leader election on', () => {
    const flags = parseManagerFlags(manager.args ?? []);
    expect(flags.leaderElection).toBe(true);
    expect(flags.webhooks).toBe(true);
    expect(flags.namespace).toBe(NS);
    expect(portNamed('webhook-server')).toBe(flags.webhookPort);
    expect(portNamed('health')).toBe(Number(flags.healthAddress.split(':').pop()));
    expect(portNamed('metrics')).toBe(Number(flags.metricsAddress.split(':').pop()));
  });

  it('probes /readyz and /healthz on the health port', () => {
    expect(manager.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'health' });
    expect(manager.livenessProbe?.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(manager.startupProbe?.httpGet.port).toBe('health');
  });

  it('is locked down: non-root, read-only root filesystem, no capabilities, RuntimeDefault seccomp', () => {
    expect(pod.securityContext?.runAsNonRoot).toBe(true);
    expect(pod.securityContext?.runAsUser).toBeGreaterThan(0);
    expect(pod.securityContext?.seccompProfile?.type).toBe('RuntimeDefault');
    expect(manager.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(manager.securityContext?.capabilities?.add ?? []).toEqual([]);
    const nsObj = find('Namespace', NS);
    expect(nsObj.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it('has resources, and a Node heap below the memory limit', () => {
    expect(manager.resources?.requests?.cpu).toBeTruthy();
    expect(manager.resources?.requests?.memory).toBeTruthy();
    const limit = mebibytes(manager.resources!.limits!.memory!);
    const heap = Number(/--max-old-space-size=(\d+)/.exec(manager.env?.find((e) => e.name === 'NODE_OPTIONS')?.value ?? '')?.[1]);
    expect(heap).toBeGreaterThan(0);
    expect(heap).toBeLessThan(limit * 0.85);
  });

  it('spreads its replicas', () => {
    expect(pod.affinity?.podAntiAffinity ?? pod.topologySpreadConstraints).toBeTruthy();
  });
});

describe('Services and the PodDisruptionBudget', () => {
  it('routes hnc-webhook-service:443 to the webhook port (the Service the manager registers)', () => {
    const svc = find<Service>('Service', 'hnc-webhook-service');
    expect(svc.metadata.namespace).toBe(NS);
    expect(selects(svc.spec.selector)).toBe(true);
    const port = svc.spec.ports.find((p) => p.port === 443)!;
    expect(portNamed(port.targetPort)).toBe(9443);
    // The name the manager puts in its webhook configurations and serving certificate.
    const sources = ['cmd/run-hnc.ts', 'webhooks/index.ts'].map((f) => readFileSync(join(ROOT, f), 'utf8')).join('\n');
    expect(sources).toContain("'hnc-webhook-service'");
  });

  it('exposes the metrics port', () => {
    const svc = find<Service>('Service', 'hnc-controller-manager-metrics-service');
    expect(selects(svc.spec.selector)).toBe(true);
    expect(portNamed(svc.spec.ports[0]!.targetPort)).toBe(8080);
  });

  it('keeps at least one replica through voluntary disruptions', () => {
    const pdb = find<RenderedObject & { spec: { minAvailable: number; selector: { matchLabels: Record<string, string> } } }>(
      'PodDisruptionBudget',
      'hnc-controller-manager',
    );
    expect(pdb.spec.minAvailable).toBe(1);
    expect(pdb.spec.minAvailable).toBeLessThan(deployment.spec.replicas);
    expect(selects(pdb.spec.selector.matchLabels)).toBe(true);
  });
});

describe('the optional NetworkPolicy (deploy/network-policy/)', () => {
  interface Peer {
    ipBlock?: { cidr: string };
    namespaceSelector?: { matchLabels: Record<string, string> };
    podSelector?: unknown;
  }
  interface Policy extends RenderedObject {
    spec: {
      podSelector: { matchLabels: Record<string, string> };
      policyTypes: string[];
      ingress: Array<{ from: Peer[]; ports: Array<{ protocol: string; port: number }> }>;
    };
  }
  const [policy, ...more] = readManifests(join(ROOT, 'deploy/network-policy/hnc-ingress.yaml')) as Policy[];
  const ruleFor = (port: number) => policy!.spec.ingress.filter((r) => r.ports.some((p) => p.port === port));

  it("is one ingress policy over the manager pods, left out of the default install (its addresses are each cluster's own)", () => {
    expect(more).toEqual([]);
    expect(policy!.kind).toBe('NetworkPolicy');
    expect(policy!.metadata.namespace).toBe(NS);
    expect(selects(policy!.spec.podSelector.matchLabels)).toBe(true);
    expect(policy!.spec.policyTypes).toEqual(['Ingress']);
    expect(objects.some((o) => o.kind === 'NetworkPolicy')).toBe(false);
  });

  it('admits the webhook port from an address block only (the API server is no pod), and every container port has its rule', () => {
    const webhook = ruleFor(portNamed('webhook-server')!);
    expect(webhook).toHaveLength(1);
    expect(webhook[0]!.from).toEqual([{ ipBlock: { cidr: expect.stringMatching(/^[\d.]+\/\d+$/) as unknown } }]);
    expect(webhook[0]!.ports).toEqual([{ protocol: 'TCP', port: 9443 }]);
    expect(ruleFor(portNamed('health')!)[0]!.from.every((p) => p.ipBlock && !p.podSelector && !p.namespaceSelector)).toBe(true);
    expect(ruleFor(portNamed('metrics')!)[0]!.from).toEqual([{ namespaceSelector: { matchLabels: expect.any(Object) as unknown } }]);
    const container = (manager.ports ?? []).map((p) => p.containerPort).sort();
    expect(policy!.spec.ingress.flatMap((r) => r.ports.map((p) => p.port)).sort()).toEqual(container);
  });
});

describe('the Dockerfile', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const build = ts.readConfigFile(join(ROOT, 'tsconfig.build.json'), ts.sys.readFile);

  it('compiles the production entry point cmd/manager.ts by tsconfig.build.json and runs it', () => {
    expect(build.error).toBeUndefined();
    const config = build.config as { files: string[]; compilerOptions: { outDir: string; rootDir: string } };
    // The admission worker's entry is started by file (webhooks/admission-thread.ts), so it is listed beside the entry point.
    expect(config.files).toEqual(['cmd/manager.ts', 'webhooks/admission-worker.ts']);
    expect(dockerfile).toContain('tsc -p tsconfig.build.json');
    expect(dockerfile).toContain(`COPY --from=build /src/${config.compilerOptions.outDir}/ ./`);
    expect(dockerfile).toMatch(/ENTRYPOINT \[.*"cmd\/manager\.js"\]/);
    // kube/install.ts finds crds/ next to the compiled kube/ folder.
    expect(dockerfile).toMatch(/^COPY crds \.\/crds$/m);
  });

  it('ships neither the local control plane nor test code (the import graph of what it compiles)', () => {
    // What tsc compiles from the entry point: every file reached through relative imports.
    const compiled = reachable(ROOT, (build.config as { files: string[] }).files);
    expect(compiled).toContain('cmd/manager.ts');
    expect(compiled).toContain('controller/manager.ts');
    expect(compiled).toContain('webhooks/admission-worker.ts');
    expect(
      [...compiled].filter(
        (f) => /^(local-cluster|test|bench|scripts|kubectl-plugin)\//.test(f) || f === 'cmd/start.ts' || f.endsWith('.test.ts'),
      ),
    ).toEqual([]);
  });

  it('runs node with the flags the benchmark measured (bench/node-flags.ts reads them from here)', () => {
    expect(shippedNodeFlags(dockerfile)).toEqual([
      '--enable-source-maps',
      '--heap-growing-percent=50',
      '--max-semi-space-size=8',
      '--expose-gc',
    ]);
    // The allocator's arenas are set in the image's environment, which the benchmark applies too.
    expect(shippedNodeEnv(dockerfile)).toEqual({ MALLOC_ARENA_MAX: '2' });
    expect(shippedNodeEnv('ENV NODE_ENV=production\nENTRYPOINT ["node", "x.js"]')).toEqual({});
    // The Deployment's NODE_OPTIONS may only carry flags node accepts there; V8 heap tuning is not one.
    expect(JSON.stringify(deployment)).not.toContain('heap-growing-percent');
    expect(JSON.stringify(deployment)).not.toContain('semi-space');
    expect(() => shippedNodeFlags('ENTRYPOINT node start.js')).toThrow('exec form');
  });

  it('asks in package.json for the pinned Node.js LTS line (.nvmrc), at most the pinned version', () => {
    const pinned = readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim().replace(/^v/, '').split('.').map(Number);
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    const m = /^>=(\d+)\.(\d+)$/.exec(pkg.engines.node);
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBe(pinned[0]);
    expect(Number(m![2])).toBeLessThanOrEqual(pinned[1]!);
  });

  it('uses the slim image of the pinned Node.js LTS (.nvmrc) and runs as the pod user, numerically', () => {
    const major = readFileSync(join(ROOT, '.nvmrc'), 'utf8').trim().replace(/^v/, '').split('.')[0];
    expect(major).toMatch(/^\d+$/);
    expect(dockerfile).toMatch(new RegExp(`^ARG NODE_IMAGE=node:${major}(\\.\\d+)*-slim$`, 'm'));
    const user = /^USER (\d+)(?::(\d+))?$/m.exec(dockerfile);
    expect(user).not.toBeNull();
    expect(Number(user![1])).toBe(pod.securityContext?.runAsUser);
  });

  it('leaves build output and dependencies out of the context', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const p of ['node_modules', 'dist', '.git']) expect(ignored).toContain(p);
    expect(existsSync(join(ROOT, 'package-lock.json'))).toBe(true);
  });
});
