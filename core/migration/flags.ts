// HNC v1.1.0's manager flags, as its Deployment passes them, against hnc-ts's install: the swap
// replaces HNC's Deployment with hnc-ts's, whose args are its own (deploy/manager/deployment.yaml),
// so a setting of HNC's that hnc-ts's install does not have is lost unless it is given again.
import { DEFAULT_EXCLUDED_NAMESPACES, DEFAULT_HNC_NAMESPACE, DEFAULT_NOPROPAGATION_LABEL } from '../api/constants.js';
import { HierarchyPolicy, PolicyError } from '../hierarchy/policy.js';
import type { Finding } from './model.js';

/** What hnc-ts's install passes its manager (deploy/manager/deployment.yaml; a test compares them). */
export const HNC_TS_INSTALL = {
  maxReconciles: '10',
  qps: '50',
  excludedNamespaces: [...DEFAULT_EXCLUDED_NAMESPACES] as readonly string[],
  nopropagationLabels: [`${DEFAULT_NOPROPAGATION_LABEL.key}=${DEFAULT_NOPROPAGATION_LABEL.value}`] as readonly string[],
  hrqSyncInterval: '1m',
} as const;

/** HNC v1.1.0's boolean flags (Go's flag package: `--x`, `--x=false`; never the next word). */
export const HNC_BOOLEAN_FLAGS = [
  'enable-stackdriver',
  'enable-leader-election',
  'no-webhooks',
  'debug-logs',
  'enable-test-log',
  'enable-internal-cert-management',
  'suppress-object-tags',
  'cert-restart-on-secret-refresh',
  'webhooks-only',
  'enable-hrq',
] as const;

/** HNC v1.1.0's flags with a value (`--x V` or `--x=V`), `--kubeconfig` (controller-runtime's) included. */
export const HNC_VALUE_FLAGS = [
  'health-probe-bind-address',
  'metrics-addr',
  'leader-election-id',
  'max-reconciles',
  'apiserver-qps-throttle',
  'webhook-server-port',
  'unpropagated-annotation',
  'excluded-namespace',
  'included-namespace-regex',
  'managed-namespace-label',
  'managed-namespace-annotation',
  'namespace',
  'hrq-sync-interval',
  'nopropagation-label',
  'kubeconfig',
  'apiextension-addr',
] as const;

/** HNC v1.1.0's flags hnc-ts accepts and ignores, so HNC's manifests start it unchanged (cmd/flags.ts uses them). */
export const IGNORED_BY_HNC_TS = [
  'enable-internal-cert-management',
  'cert-restart-on-secret-refresh',
  'enable-stackdriver',
  'suppress-object-tags',
  'debug-logs',
  'enable-test-log',
  'webhooks-only',
  'apiextension-addr',
] as const;

export interface ParsedFlags {
  /** Flag name → its values in order (booleans as "true"/"false"). */
  values: Map<string, string[]>;
  /** Flags HNC v1.1.0 does not have. */
  unknown: string[];
}

const GO_TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);
/** Whether HNC v1.1.0's flag `name` is a boolean (never takes the next word). */
export const isHncBooleanFlag = (name: string): boolean => (HNC_BOOLEAN_FLAGS as readonly string[]).includes(name);
const takesValue = (name: string): boolean => (HNC_VALUE_FLAGS as readonly string[]).includes(name);

/** Reads args as Go's flag package does (`-x` and `--x` alike); words that are not flags are skipped. */
export function parseHncFlags(args: readonly string[]): ParsedFlags {
  const values = new Map<string, string[]>();
  const unknown: string[] = [];
  const add = (name: string, v: string) => values.set(name, [...(values.get(name) ?? []), v]);
  for (let i = 0; i < args.length; i++) {
    const m = /^--?([^-=][^=]*)(?:=(.*))?$/s.exec(args[i]!);
    if (!m) continue;
    const [, name = '', inline] = m;
    if (isHncBooleanFlag(name)) add(name, inline === undefined || GO_TRUE.has(inline) ? 'true' : GO_FALSE.has(inline) ? 'false' : inline);
    else if (takesValue(name)) add(name, inline ?? args[++i] ?? '');
    else unknown.push(name);
  }
  return { values, unknown };
}

const last = (f: ParsedFlags, name: string): string | undefined => f.values.get(name)?.at(-1);
const isTrue = (f: ParsedFlags, name: string): boolean => last(f, name) === 'true';

/** Flags without a chart value of their own go through this one. */
const EXTRA_ARGS = 'Helm: manager.extraArgs';

const needs = (subject: string, message: string, args: string[], helm?: string[]): Finding => ({
  area: 'flags',
  severity: 'action',
  subject,
  message,
  args,
  ...(helm ? { helm } : {}),
});

/** --x=V for a one-value flag whose value differs from hnc-ts's install. */
function oneValue(f: ParsedFlags, flag: string, install: string, helmKey: string): Finding[] {
  const v = last(f, flag);
  if (v === undefined || v === install) return [];
  return [
    needs(
      `--${flag}`,
      `HNC ran with --${flag}=${v}; hnc-ts's install sets ${install}: give it the same`,
      [`--${flag}=${v}`],
      [`--set ${helmKey}=${v}`],
    ),
  ];
}

function excludedNamespaces(f: ParsedFlags, hncNamespace: string): Finding[] {
  const given = f.values.get('excluded-namespace');
  if (!given) return [];
  const own = new Set([...HNC_TS_INSTALL.excludedNamespaces, hncNamespace]);
  const extra = [...new Set(given)].filter((ns) => !own.has(ns));
  const lost = HNC_TS_INSTALL.excludedNamespaces.filter((ns) => !given.includes(ns));
  const out: Finding[] = [];
  if (extra.length) {
    const all = [...HNC_TS_INSTALL.excludedNamespaces, ...extra];
    out.push(
      needs(
        '--excluded-namespace',
        `HNC excluded ${extra.join(', ')}; hnc-ts's install excludes only ${[...own].join(', ')}: exclude them too, or hnc-ts manages them`,
        extra.map((ns) => `--excluded-namespace=${ns}`),
        [`--set-json ${shellQuote(`hncExcludeNamespaces=${JSON.stringify(all)}`)}`],
      ),
    );
  }
  if (lost.length)
    out.push({
      area: 'flags',
      severity: 'change',
      subject: '--excluded-namespace',
      message: `hnc-ts's install also excludes ${lost.join(', ')}, which HNC managed`,
    });
  return out;
}

function noPropagationLabels(f: ParsedFlags): Finding[] {
  const given = f.values.get('nopropagation-label');
  if (!given) return [];
  const extra = [...new Set(given)].filter((l) => !HNC_TS_INSTALL.nopropagationLabels.includes(l));
  const lost = HNC_TS_INSTALL.nopropagationLabels.filter((l) => !given.includes(l));
  const out: Finding[] = [];
  if (extra.length)
    out.push(
      needs(
        '--nopropagation-label',
        `HNC never propagated objects labelled ${extra.join(', ')}; hnc-ts's install skips only ${HNC_TS_INSTALL.nopropagationLabels.join(', ')}: give it the same`,
        extra.map((l) => `--nopropagation-label=${l}`),
        [`--set-json ${shellQuote(`manager.nopropagationLabels=${JSON.stringify([...HNC_TS_INSTALL.nopropagationLabels, ...extra])}`)}`],
      ),
    );
  if (lost.length)
    out.push({
      area: 'flags',
      severity: 'change',
      subject: '--nopropagation-label',
      message: `hnc-ts's install also never propagates objects labelled ${lost.join(', ')} (Rancher's), which HNC propagated`,
    });
  return out;
}

/** Managed label and annotation regexes: hnc-ts anchors them as a whole and refuses ones matching its own keys. */
function managedKeys(f: ParsedFlags, flag: 'managed-namespace-label' | 'managed-namespace-annotation'): Finding[] {
  return [...new Set(f.values.get(flag) ?? [])].map((re): Finding => {
    const opts = flag === 'managed-namespace-label' ? { managedLabels: [re] } : { managedAnnotations: [re] };
    try {
      new HierarchyPolicy(opts);
    } catch (err) {
      if (!(err instanceof PolicyError)) throw err;
      return { area: 'flags', severity: 'action', subject: `--${flag}`, message: `hnc-ts refuses --${flag}=${re}: ${err.message}` };
    }
    const anchoring = re.includes('|') ? `; hnc-ts anchors it as ^(?:${re})$, HNC as ^${re}$` : '';
    return needs(
      `--${flag}`,
      `HNC managed the namespace ${flag === 'managed-namespace-label' ? 'labels' : 'annotations'} matching ${re}: give hnc-ts the same flag${anchoring} (${EXTRA_ARGS})`,
      [`--${flag}=${re}`],
    );
  });
}

/** Flags given as extraArgs with Helm: the value as HNC had it. */
function plainFlags(f: ParsedFlags, hncNamespace: string): Finding[] {
  const out: Finding[] = [];
  const regex = last(f, 'included-namespace-regex');
  if (regex !== undefined && regex !== '.*')
    out.push(
      needs('--included-namespace-regex', `HNC managed only namespaces matching ${regex}: give hnc-ts the same flag (${EXTRA_ARGS})`, [
        `--included-namespace-regex=${regex}`,
      ]),
    );
  for (const key of new Set(f.values.get('unpropagated-annotation') ?? []))
    out.push(
      needs('--unpropagated-annotation', `HNC never copied the annotation ${key}: give hnc-ts the same flag (${EXTRA_ARGS})`, [
        `--unpropagated-annotation=${key}`,
      ]),
    );
  if (hncNamespace !== DEFAULT_HNC_NAMESPACE)
    out.push(
      needs(
        '--namespace',
        `HNC ran in ${hncNamespace}; hnc-ts's install runs in ${DEFAULT_HNC_NAMESPACE}: install it in ${hncNamespace} and give it the same flag`,
        [`--namespace=${hncNamespace}`],
      ),
    );
  if (isTrue(f, 'no-webhooks'))
    out.push({
      area: 'flags',
      severity: 'change',
      subject: '--no-webhooks',
      message: `HNC ran without its webhooks; hnc-ts's install runs them (--no-webhooks turns them off, not recommended)`,
    });
  return out;
}

/** What hnc-ts does instead of the flags it ignores, when HNC had them on. */
const IGNORED_INSTEAD: Record<string, string> = {
  'enable-stackdriver': 'hnc-ts has no Stackdriver export; it serves Prometheus metrics on /metrics',
  'debug-logs': 'hnc-ts ignores it: set HNC_LOG_LEVEL=debug on its manager (Helm: --set manager.logLevel=debug)',
  'webhooks-only': 'hnc-ts ignores it: every replica serves the webhooks and one reconciles, so a webhooks-only Deployment is not needed',
};

function ignoredFlags(f: ParsedFlags): { ok: string[]; findings: Finding[] } {
  const ok: string[] = [];
  const findings: Finding[] = [];
  for (const flag of IGNORED_BY_HNC_TS) {
    if (!f.values.has(flag)) continue;
    const instead = IGNORED_INSTEAD[flag];
    if (instead && isTrue(f, flag)) findings.push({ area: 'flags', severity: 'change', subject: `--${flag}`, message: instead });
    else ok.push(`--${flag}`);
  }
  return { ok, findings };
}

/** Every flag HNC's Deployment passes, with what hnc-ts's install does about it. */
export function flagFindings(args: readonly string[]): Finding[] {
  const f = parseHncFlags(args);
  const hncNamespace = last(f, 'namespace') ?? DEFAULT_HNC_NAMESPACE;
  const ignored = ignoredFlags(f);
  const findings = [
    ...excludedNamespaces(f, hncNamespace),
    ...noPropagationLabels(f),
    ...managedKeys(f, 'managed-namespace-label'),
    ...managedKeys(f, 'managed-namespace-annotation'),
    ...plainFlags(f, hncNamespace),
    ...oneValue(f, 'max-reconciles', HNC_TS_INSTALL.maxReconciles, 'manager.maxReconciles'),
    ...oneValue(f, 'apiserver-qps-throttle', HNC_TS_INSTALL.qps, 'manager.apiserverQPSThrottle'),
    ...oneValue(f, 'hrq-sync-interval', HNC_TS_INSTALL.hrqSyncInterval, 'hrq.syncInterval'),
    ...ignored.findings,
    ...f.unknown.map((name): Finding => ({
      area: 'flags',
      severity: 'change',
      subject: `--${name}`,
      message: `not a flag of HNC v1.1.0 that hnc-ts knows: not carried over`,
    })),
  ];
  // The rest has the same effect in hnc-ts's install (its ports, leader election ...); the HRQ
  // finding covers --enable-hrq.
  const handled = new Set([...findings.map((x) => x.subject), '--enable-hrq', ...IGNORED_BY_HNC_TS.map((n) => `--${n}`)]);
  const same = [...f.values.keys()].filter((name) => !handled.has(`--${name}`));
  const ok = [...same.map((n) => `--${n}`), ...ignored.ok];
  if (ok.length)
    findings.unshift({
      area: 'flags',
      severity: 'ok',
      subject: ok.join(' '),
      message: `carried over: hnc-ts's install has the same effect, or hnc-ts ignores them (${ok.join(', ')})`,
    });
  return findings;
}

/** Whether HNC's Deployment runs the HRQ variant. */
export const hrqEnabled = (args: readonly string[]): boolean => isTrue(parseHncFlags(args), 'enable-hrq');

/** One word for a POSIX shell. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=,@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Every flag to add to hnc-ts's manager, and the Helm options that give them all. */
export function carryOver(findings: readonly Finding[]): { args: string[]; helm: string[] } {
  const needed = findings.filter((x) => x.area === 'flags' && x.severity === 'action' && x.args);
  const args = needed.flatMap((x) => x.args ?? []);
  const extra = needed.filter((x) => !x.helm).flatMap((x) => x.args ?? []);
  const helm = [
    ...needed.flatMap((x) => x.helm ?? []),
    ...(extra.length ? [`--set-json ${shellQuote(`manager.extraArgs=${JSON.stringify(extra)}`)}`] : []),
  ];
  return { args, helm };
}
