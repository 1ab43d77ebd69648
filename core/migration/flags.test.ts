import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { carryOver, flagFindings, HNC_TS_INSTALL, parseHncFlags } from './flags.js';
import type { Finding } from './model.js';

/** HNC v1.1.0's own manifest's args (config/manager/manager.yaml). */
const HNC_DEFAULT_ARGS = [
  '--webhook-server-port=9443',
  '--metrics-addr=:8080',
  '--max-reconciles=10',
  '--apiserver-qps-throttle=50',
  '--excluded-namespace=kube-system',
  '--excluded-namespace=kube-public',
  '--excluded-namespace=hnc-system',
  '--excluded-namespace=kube-node-lease',
  '--nopropagation-label=cattle.io/creator=norman',
  '--enable-internal-cert-management',
  '--cert-restart-on-secret-refresh',
];

const bySubject = (args: string[]): Record<string, Finding> => Object.fromEntries(flagFindings(args).map((f) => [f.subject, f]));

describe('parseHncFlags', () => {
  it("reads args as Go's flag package: one or two dashes, =V or the next word, booleans never take one", () => {
    const f = parseHncFlags([
      '-max-reconciles',
      '20',
      '--enable-hrq',
      '--excluded-namespace=a',
      '--excluded-namespace',
      'b',
      '--debug-logs=F',
    ]);
    expect(Object.fromEntries(f.values)).toEqual({
      'max-reconciles': ['20'],
      'enable-hrq': ['true'],
      'excluded-namespace': ['a', 'b'],
      'debug-logs': ['false'],
    });
    expect(parseHncFlags(['--bogus=1', 'word', '--', '-v']).unknown).toEqual(['bogus', 'v']);
  });
});

describe('flagFindings', () => {
  it("finds nothing to do for HNC's own manifest: every flag carried over or ignored", () => {
    const findings = flagFindings(HNC_DEFAULT_ARGS);
    expect(findings.map((f) => f.severity)).toEqual(['ok']);
    expect(findings[0]!.message).toContain('--excluded-namespace, --nopropagation-label');
    expect(findings[0]!.message).toContain('--enable-internal-cert-management');
  });

  it('asks for the settings hnc-ts’s install lacks, with their args and Helm values', () => {
    const f = bySubject([
      ...HNC_DEFAULT_ARGS,
      '--excluded-namespace=legacy',
      '--max-reconciles=20',
      '--managed-namespace-label=env',
      '--managed-namespace-annotation=a|b',
      '--unpropagated-annotation=team.example.com/owner',
      '--nopropagation-label=skip=yes',
      '--included-namespace-regex=team-.*',
    ]);
    expect(f['--excluded-namespace']).toMatchObject({ severity: 'action', args: ['--excluded-namespace=legacy'] });
    expect(f['--excluded-namespace']!.helm).toEqual([
      `--set-json 'hncExcludeNamespaces=["kube-system","kube-public","kube-node-lease","legacy"]'`,
    ]);
    expect(f['--max-reconciles']).toMatchObject({
      severity: 'action',
      args: ['--max-reconciles=20'],
      helm: ['--set manager.maxReconciles=20'],
    });
    expect(f['--managed-namespace-label']).toMatchObject({ severity: 'action', args: ['--managed-namespace-label=env'] });
    expect(f['--managed-namespace-annotation']!.message).toContain('hnc-ts anchors it as ^(?:a|b)$, HNC as ^a|b$');
    expect(f['--nopropagation-label']!.helm).toEqual([`--set-json 'manager.nopropagationLabels=["cattle.io/creator=norman","skip=yes"]'`]);
    expect(f['--unpropagated-annotation']!.args).toEqual(['--unpropagated-annotation=team.example.com/owner']);
    expect(f['--included-namespace-regex']!.args).toEqual(['--included-namespace-regex=team-.*']);
  });

  it('gathers them into one set of args and one Helm command line, the flags without a chart value as extraArgs', () => {
    const report = carryOver(flagFindings(['--max-reconciles=20', '--managed-namespace-label=env', '--managed-namespace-label=tier']));
    expect(report).toEqual({
      args: ['--managed-namespace-label=env', '--managed-namespace-label=tier', '--max-reconciles=20'],
      helm: [
        '--set manager.maxReconciles=20',
        `--set-json 'manager.extraArgs=["--managed-namespace-label=env","--managed-namespace-label=tier"]'`,
      ],
    });
  });

  it('says what is refused, lost or behaves otherwise', () => {
    const f = bySubject([
      '--managed-namespace-label=.*',
      '--excluded-namespace=kube-system',
      '--debug-logs',
      '--webhooks-only=true',
      '--enable-stackdriver=false',
      '--frobnicate',
    ]);
    expect(f['--managed-namespace-label']).toMatchObject({ severity: 'action' });
    expect(f['--managed-namespace-label']!.message).toContain('hnc-ts refuses --managed-namespace-label=.*');
    expect(f['--managed-namespace-label']!.args).toBeUndefined();
    expect(f['--excluded-namespace']).toMatchObject({ severity: 'change' });
    expect(f['--excluded-namespace']!.message).toContain('also excludes kube-public, kube-node-lease');
    expect(f['--debug-logs']!.message).toContain('HNC_LOG_LEVEL=debug');
    expect(f['--webhooks-only']).toMatchObject({ severity: 'change' });
    expect(f['--frobnicate']).toMatchObject({ severity: 'change' });
    expect(f['--enable-stackdriver=false']).toBeUndefined();
    expect(Object.values(f).find((x) => x.severity === 'ok')!.message).toContain('--enable-stackdriver');
  });

  it('leaves --enable-hrq to the HRQ finding', () => {
    expect(flagFindings(['--enable-hrq'])).toEqual([]);
  });
});

describe("HNC_TS_INSTALL is hnc-ts's install", () => {
  it('matches the args of deploy/manager/deployment.yaml', () => {
    const path = fileURLToPath(new URL('../../deploy/manager/deployment.yaml', import.meta.url));
    const deployment = parseAllDocuments(readFileSync(path, 'utf8'))
      .map((d) => d.toJS() as { kind?: string; spec?: { template: { spec: { containers: { args: string[] }[] } } } })
      .find((d) => d.kind === 'Deployment')!;
    const f = parseHncFlags(deployment.spec!.template.spec.containers[0]!.args);
    expect(f.values.get('max-reconciles')).toEqual([HNC_TS_INSTALL.maxReconciles]);
    expect(f.values.get('apiserver-qps-throttle')).toEqual([HNC_TS_INSTALL.qps]);
    expect(f.values.get('excluded-namespace')).toEqual(HNC_TS_INSTALL.excludedNamespaces);
    expect(f.values.get('nopropagation-label')).toEqual(HNC_TS_INSTALL.nopropagationLabels);
    expect(f.values.get('hrq-sync-interval')).toBeUndefined();
    // The install's own flags read as HNC's would: none is unknown to the check.
    expect(f.unknown).toEqual([]);
  });
});
