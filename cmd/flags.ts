// The manager's command-line flags, named as HNC's (docs/behaviour.md §9.1) so its manifests keep working,
// plus hnc-ts's own (marked).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { DEFAULT_EXCLUDED_NAMESPACES, DEFAULT_HNC_NAMESPACE, DEFAULT_NOPROPAGATION_LABEL } from '../core/api/constants.js';
import { HierarchyPolicy } from '../core/hierarchy/policy.js';
import { IGNORED_BY_HNC_TS, isHncBooleanFlag } from '../core/migration/flags.js';
import { copyPolicy, DEFAULT_NEVER_COPIED_KEYS } from '../core/propagation/copy.js';
import type { PropagationOptions } from '../core/propagation/decide.js';

/**
 * Propagating one object is one write per descendant, each its own namespace reconcile: the API
 * server sustains its best write rate only with a few dozen writes in flight (bench/), so the
 * propagated types get more workers than the hierarchy's queues. The QPS limit still applies.
 */
export const DEFAULT_OBJECT_WORKERS = 32;

export interface ManagerFlags {
  policy: HierarchyPolicy;
  namespace: string;
  workers: number;
  /** (hnc-ts) Concurrent namespace reconciles per propagated type. */
  objectWorkers: number;
  qps: number;
  propagation: PropagationOptions;
  webhooks: boolean;
  webhookPort: number;
  /** (hnc-ts) Outside the cluster: the address at which the API server reaches this machine. */
  webhookHost?: string;
  /** (hnc-ts) Serve the webhooks on the main thread instead of the admission thread (less memory; reviews wait for reconciles). */
  webhooksOnMainThread: boolean;
  certDir?: string;
  leaderElection: boolean;
  leaderElectionId: string;
  leaseSeconds: number;
  healthAddress: string;
  metricsAddress: string;
  /** Hierarchical resource quotas: off unless --enable-hrq. */
  hrq?: { syncIntervalMs: number };
}

export const MANAGER_FLAG_HELP = `Manager flags (as HNC's unless marked):
  --excluded-namespace NS            never manage NS (repeatable; default kube-system, kube-public, kube-node-lease)
  --included-namespace-regex RE      manage only namespaces matching ^RE$ (default .*)
  --managed-namespace-label RE       namespace label keys HNC manages and propagates (repeatable)
  --managed-namespace-annotation RE  namespace annotation keys HNC manages and propagates (repeatable)
  --namespace NS                     HNC's own namespace, always excluded (default hnc-system)
  --max-reconciles N                 concurrent reconciles per controller (default 10)
  --max-object-reconciles N          (hnc-ts) concurrent namespace reconciles per propagated type (default 32):
                                     one new object at the root is one write per descendant
  --apiserver-qps-throttle N         client-side writes/s for each resource type, as HNC (default 50; burst 1.5x)
  --unpropagated-label KEY           label key never copied to propagated objects (repeatable)
  --unpropagated-annotation KEY      annotation key never copied (repeatable)
  --never-copy-key KEY               (hnc-ts) replaces the default never-copied keys (repeatable; 'none' for none)
                                     default: ${DEFAULT_NEVER_COPIED_KEYS.map((k) => k.key).join(', ')}
  --nopropagation-label KEY=VALUE    objects with this label are never propagated (repeatable; default ${DEFAULT_NOPROPAGATION_LABEL.key}=${DEFAULT_NOPROPAGATION_LABEL.value})
  --no-webhooks                      run without the admission webhooks
  --webhook-server-port N            webhook HTTPS port (default 9443; 0 picks a free one)
  --webhook-host HOST                (hnc-ts) running outside the cluster: an address of this machine the API
                                     server can reach; webhooks are registered as https://HOST:PORT, checked
                                     to answer first, and removed on stop (default: 127.0.0.1 when the API
                                     server is on this machine; else no webhooks, with a warning)
  --webhooks-on-main-thread          (hnc-ts) serve the webhooks on the controller's thread, not a thread of their own:
                                     about 20 MB less memory (no second heap and hierarchy), for a small cluster; but
                                     reviews wait while it reconciles
  --cert-dir DIR                     serve tls.crt/tls.key from DIR (cert-manager) instead of managing certificates
  --enable-leader-election           reconcile only while holding the lease (for several replicas)
  --leader-election-id NAME          the Lease's name (default controller-leader-election-helper)
  --leader-election-lease-seconds N  (hnc-ts) lease duration (default 15; renewal deadline 2/3 of it)
  --health-probe-bind-address ADDR   /healthz and /readyz (default :8081; empty disables)
  --metrics-addr ADDR                /metrics (default :8080; empty disables)
  --enable-hrq                       hierarchical resource quotas: their controller and webhooks (docs/hrq.md)
  --hrq-sync-interval DURATION       how often every HRQ and quota singleton is re-checked (default 1m; 0 never)
`;

export const managerFlagOptions = {
  'excluded-namespace': { type: 'string', multiple: true },
  'included-namespace-regex': { type: 'string' },
  'managed-namespace-label': { type: 'string', multiple: true },
  'managed-namespace-annotation': { type: 'string', multiple: true },
  namespace: { type: 'string' },
  'max-reconciles': { type: 'string' },
  'max-object-reconciles': { type: 'string' },
  'apiserver-qps-throttle': { type: 'string' },
  'unpropagated-label': { type: 'string', multiple: true },
  'unpropagated-annotation': { type: 'string', multiple: true },
  'never-copy-key': { type: 'string', multiple: true },
  'nopropagation-label': { type: 'string', multiple: true },
  'no-webhooks': { type: 'boolean' },
  'webhook-server-port': { type: 'string' },
  'webhook-host': { type: 'string' },
  'webhooks-on-main-thread': { type: 'boolean' },
  'cert-dir': { type: 'string' },
  'enable-leader-election': { type: 'boolean' },
  'leader-election-id': { type: 'string' },
  'leader-election-lease-seconds': { type: 'string' },
  'health-probe-bind-address': { type: 'string' },
  'metrics-addr': { type: 'string' },
  'enable-hrq': { type: 'boolean' },
  'hrq-sync-interval': { type: 'string' },
} as const;

type Values = Partial<Record<keyof typeof managerFlagOptions, string | string[] | boolean | undefined>>;

export class FlagError extends Error {
  override name = 'FlagError';
}

const wholeNumber = (v: unknown, flag: string, dflt: number, min = 1): number => {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new FlagError(`--${flag} must be a whole number of at least ${min}, not ${JSON.stringify(v)}`);
  return n;
};

function noPropagationLabels(values: string[] | undefined): Array<{ key: string; value: string }> {
  if (!values) return [{ ...DEFAULT_NOPROPAGATION_LABEL }];
  return values.map((v) => {
    const parts = v.split('=');
    if (parts.length !== 2 || !parts[0])
      throw new FlagError(`--nopropagation-label must be KEY=VALUE with a non-empty key, not ${JSON.stringify(v)}`);
    return { key: parts[0], value: parts[1]! };
  });
}

function webhookHost(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  // A host name or an IP address (IPv6 without brackets), nothing that would change the URL's shape.
  if (!/^[A-Za-z0-9.:-]+$/.test(v) || v.startsWith('-'))
    throw new FlagError(`--webhook-host must be a host name or an IP address, not ${JSON.stringify(v)}`);
  return v;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration as HNC's flags take it ("1m", "30s", "1m30s", "500ms", "0"), in milliseconds. */
export function parseDuration(text: string, flag: string): number {
  if (text === '0') return 0;
  const parts = [...text.matchAll(/([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text)
    throw new FlagError(`--${flag} must be a duration such as 30s, 1m or 1m30s, not ${JSON.stringify(text)}`);
  return Math.round(parts.reduce((ms, p) => ms + Number(p[1]) * DURATION_UNITS[p[2]!]!, 0));
}

export function managerFlagsFrom(values: Values): ManagerFlags {
  const namespace = (values.namespace as string | undefined) ?? DEFAULT_HNC_NAMESPACE;
  const policy = new HierarchyPolicy({
    excludedNamespaces: (values['excluded-namespace'] as string[] | undefined) ?? [...DEFAULT_EXCLUDED_NAMESPACES],
    includedNamespaceRegex: values['included-namespace-regex'] as string | undefined,
    managedLabels: values['managed-namespace-label'] as string[] | undefined,
    managedAnnotations: values['managed-namespace-annotation'] as string[] | undefined,
    hncNamespace: namespace,
  });
  const never = values['never-copy-key'] as string[] | undefined;
  return {
    policy,
    namespace,
    workers: wholeNumber(values['max-reconciles'], 'max-reconciles', 10),
    objectWorkers: wholeNumber(values['max-object-reconciles'], 'max-object-reconciles', DEFAULT_OBJECT_WORKERS),
    qps: wholeNumber(values['apiserver-qps-throttle'], 'apiserver-qps-throttle', 50),
    propagation: {
      copy: copyPolicy({
        neverCopied: never ? never.filter((k) => k !== 'none') : undefined,
        unpropagatedLabels: values['unpropagated-label'] as string[] | undefined,
        unpropagatedAnnotations: values['unpropagated-annotation'] as string[] | undefined,
      }),
      noPropagationLabels: noPropagationLabels(values['nopropagation-label'] as string[] | undefined),
    },
    webhooks: values['no-webhooks'] !== true,
    webhookPort: wholeNumber(values['webhook-server-port'], 'webhook-server-port', 9443, 0),
    webhookHost: webhookHost(values['webhook-host'] as string | undefined),
    webhooksOnMainThread: values['webhooks-on-main-thread'] === true,
    certDir: values['cert-dir'] as string | undefined,
    leaderElection: values['enable-leader-election'] === true,
    leaderElectionId: (values['leader-election-id'] as string | undefined) ?? 'controller-leader-election-helper',
    leaseSeconds: wholeNumber(values['leader-election-lease-seconds'], 'leader-election-lease-seconds', 15, 2),
    healthAddress: (values['health-probe-bind-address'] as string | undefined) ?? ':8081',
    metricsAddress: (values['metrics-addr'] as string | undefined) ?? ':8080',
    hrq:
      values['enable-hrq'] === true
        ? { syncIntervalMs: parseDuration((values['hrq-sync-interval'] as string | undefined) ?? '1m', 'hrq-sync-interval') }
        : undefined,
  };
}

/**
 * HNC manager flags hnc-ts accepts and ignores, so HNC's manifests start it unchanged, and hnc-ts's
 * retired ones, so an upgrade does too: booleans
 * (also as `--flag=false`) and flags with a value (`--flag V` or `--flag=V`).
 */
const IGNORED_HNC_BOOLEANS: readonly string[] = [
  ...IGNORED_BY_HNC_TS.filter((f) => isHncBooleanFlag(f)),
  // hnc-ts's own, retired: a Deployment that still passes one starts as before.
  'webhook-local-authorization',
];
const IGNORED_HNC_VALUES: readonly string[] = [
  ...IGNORED_BY_HNC_TS.filter((f) => !isHncBooleanFlag(f)),
  // hnc-ts's own, retired.
  'webhook-http-server',
  'webhook-api-client',
  'reconciler-nice',
  'admission-nice',
];

/** Removes the HNC flags hnc-ts ignores; returns the rest and the names it removed. */
export function withoutIgnoredHncFlags(argv: readonly string[]): { args: string[]; ignored: string[] } {
  const args: string[] = [];
  const ignored: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const m = /^--([^=]+)(=.*)?$/.exec(a);
    // Go's flag package takes --enable-hrq=true/false; parseArgs only the bare form.
    if (m?.[1] === 'enable-hrq' && m[2] !== undefined) {
      if (m[2] === '=true') args.push('--enable-hrq');
      else if (m[2] !== '=false') throw new FlagError(`--enable-hrq takes true or false, not ${JSON.stringify(m[2].slice(1))}`);
      continue;
    }
    if (m && IGNORED_HNC_BOOLEANS.includes(m[1]!)) {
      ignored.push(m[1]!);
      continue;
    }
    if (m && IGNORED_HNC_VALUES.includes(m[1]!)) {
      ignored.push(m[1]!);
      if (m[2] === undefined) i++; // the value is the next word
      continue;
    }
    args.push(a);
  }
  return { args, ignored };
}

/** The options both entry points take: the cluster to use, help, and the manager flags. */
const commandLineOptions = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
  ...managerFlagOptions,
} as const;

/**
 * An entry point's command line: `extra` adds its own options. `given` names the options the user
 * set (so a default can differ from one the user chose); `ignored`, the HNC flags dropped.
 */
export function parseCommandLine<const O extends NonNullable<ParseArgsConfig['options']>>(argv: readonly string[], extra: O) {
  const { args, ignored } = withoutIgnoredHncFlags(argv);
  const { values, tokens } = parseArgs({ args, options: { ...commandLineOptions, ...extra }, strict: true, tokens: true });
  const given = new Set(tokens.filter((t) => t.kind === 'option').map((t) => t.name));
  return { values, given, ignored };
}

export function parseManagerFlags(argv: string[]): ManagerFlags {
  const { values } = parseArgs({ args: withoutIgnoredHncFlags(argv).args, options: managerFlagOptions, strict: true });
  return managerFlagsFrom(values);
}
