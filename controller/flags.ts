// The manager's command-line flags, named as HNC's (reference §11.1) so its manifests keep working.
import { parseArgs } from 'node:util';
import { DEFAULT_EXCLUDED_NAMESPACES, DEFAULT_HNC_NAMESPACE } from '../core/api/constants.js';
import { HierarchyPolicy } from '../core/hierarchy/policy.js';

export interface ManagerFlags {
  kubeconfig?: string;
  context?: string;
  policy: HierarchyPolicy;
  namespace: string;
  workers: number;
  qps: number;
}

export const MANAGER_FLAG_HELP = `Manager flags (as HNC's):
  --excluded-namespace NS            never manage NS (repeatable; default kube-system, kube-public, kube-node-lease)
  --included-namespace-regex RE      manage only namespaces matching ^RE$ (default .*)
  --managed-namespace-label RE       namespace label keys HNC manages and propagates (repeatable)
  --managed-namespace-annotation RE  namespace annotation keys HNC manages and propagates (repeatable)
  --namespace NS                     HNC's own namespace, always excluded (default hnc-system)
  --max-reconciles N                 concurrent reconciles per controller (default 10)
  --apiserver-qps-throttle N         client-side write QPS (default 50; burst 1.5x)
`;

export const managerFlagOptions = {
  'excluded-namespace': { type: 'string', multiple: true },
  'included-namespace-regex': { type: 'string' },
  'managed-namespace-label': { type: 'string', multiple: true },
  'managed-namespace-annotation': { type: 'string', multiple: true },
  namespace: { type: 'string' },
  'max-reconciles': { type: 'string' },
  'apiserver-qps-throttle': { type: 'string' },
} as const;

type Values = Partial<Record<keyof typeof managerFlagOptions, string | string[] | boolean | undefined>>;

export class FlagError extends Error {
  override name = 'FlagError';
}

const positiveInt = (v: unknown, flag: string, dflt: number): number => {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new FlagError(`--${flag} must be a positive whole number, not ${JSON.stringify(v)}`);
  return n;
};

export function managerFlagsFrom(values: Values): Omit<ManagerFlags, 'kubeconfig' | 'context'> {
  const namespace = (values.namespace as string | undefined) ?? DEFAULT_HNC_NAMESPACE;
  const policy = new HierarchyPolicy({
    excludedNamespaces: (values['excluded-namespace'] as string[] | undefined) ?? [...DEFAULT_EXCLUDED_NAMESPACES],
    includedNamespaceRegex: values['included-namespace-regex'] as string | undefined,
    managedLabels: values['managed-namespace-label'] as string[] | undefined,
    managedAnnotations: values['managed-namespace-annotation'] as string[] | undefined,
    hncNamespace: namespace,
  });
  return {
    policy,
    namespace,
    workers: positiveInt(values['max-reconciles'], 'max-reconciles', 10),
    qps: positiveInt(values['apiserver-qps-throttle'], 'apiserver-qps-throttle', 50),
  };
}

export function parseManagerFlags(argv: string[]): ManagerFlags {
  const { values } = parseArgs({ args: argv, options: { ...managerFlagOptions, kubeconfig: { type: 'string' }, context: { type: 'string' } }, strict: true });
  return { ...managerFlagsFrom(values), kubeconfig: values.kubeconfig, context: values.context };
}
