// kubectl's global connection flags (the set HNC's plugin takes from kubectl's own flag set),
// accepted by every command, before or after it, with kubectl's meaning. See docs/kubectl-hns.md.
import type { FlagSpec, FlagValues } from './flag-spec.js';
import { arrayFlag, boolFlag, stringFlag } from './flag-spec.js';
import { CliError } from '../errors.js';

/** kubectl's global flags, typed. */
export interface GlobalFlags {
  kubeconfig?: string;
  context?: string;
  cluster?: string;
  user?: string;
  namespace?: string;
  server?: string;
  token?: string;
  username?: string;
  password?: string;
  certificateAuthority?: string;
  clientCertificate?: string;
  clientKey?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
  as?: string;
  asGroup?: string[];
  asUid?: string;
  cacheDir?: string;
  requestTimeout?: string;
  disableCompression?: boolean;
  /** kubectl's `-v, --v=N` log level, a whole number (0 without the flag). */
  v?: number;
}

/** From this log level on (kubectl's debug level), a preview says on stderr how it read the copies. */
export const PREVIEW_DEBUG_LEVEL = 4;

/** HNC's plugin gives every API call 5 s. */
export const DEFAULT_REQUEST_TIMEOUT = '5s';

export const GLOBAL_FLAGS: readonly FlagSpec[] = [
  {
    name: 'as',
    kind: 'string',
    description: 'Username to impersonate for the operation. User could be a regular user or a service account in a namespace.',
  },
  {
    name: 'as-group',
    kind: 'array',
    description: 'Group to impersonate for the operation, this flag can be repeated to specify multiple groups.',
  },
  { name: 'as-uid', kind: 'string', description: 'UID to impersonate for the operation.' },
  {
    name: 'cache-dir',
    kind: 'string',
    description: 'Default cache directory; `get` keeps the API discovery there',
    defaultText: '$HOME/.kube/cache',
  },
  { name: 'certificate-authority', kind: 'string', description: 'Path to a cert file for the certificate authority' },
  { name: 'client-certificate', kind: 'string', description: 'Path to a client certificate file for TLS' },
  { name: 'client-key', kind: 'string', description: 'Path to a client key file for TLS' },
  { name: 'cluster', kind: 'string', description: 'The name of the kubeconfig cluster to use' },
  { name: 'context', kind: 'string', description: 'The name of the kubeconfig context to use' },
  {
    name: 'disable-compression',
    kind: 'bool',
    description: 'If true, opt-out of response compression for all requests to the server (the plugin never asks for it)',
  },
  {
    name: 'insecure-skip-tls-verify',
    kind: 'bool',
    description: "If true, the server's certificate will not be checked for validity. This will make your HTTPS connections insecure",
  },
  { name: 'kubeconfig', kind: 'string', description: 'Path to the kubeconfig file to use for CLI requests.' },
  {
    name: 'namespace',
    short: 'n',
    kind: 'string',
    description: 'If present, the namespace scope for this CLI request (the parent, for create and delete)',
  },
  { name: 'password', kind: 'string', description: 'Password for basic authentication to the API server' },
  {
    name: 'request-timeout',
    kind: 'string',
    description:
      "The length of time to wait before giving up on a single server request. Non-zero values should contain a corresponding time unit (e.g. 1s, 2m, 3h). A value of zero means don't timeout requests.",
    defaultText: DEFAULT_REQUEST_TIMEOUT,
  },
  { name: 'server', short: 's', kind: 'string', description: 'The address and port of the Kubernetes API server' },
  {
    name: 'tls-server-name',
    kind: 'string',
    description:
      'Server name to use for server certificate validation. If it is not provided, the hostname used to contact the server is used',
  },
  { name: 'token', kind: 'string', description: 'Bearer token for authentication to the API server' },
  { name: 'user', kind: 'string', description: 'The name of the kubeconfig user to use' },
  { name: 'username', kind: 'string', description: 'Username for basic authentication to the API server' },
  {
    name: 'v',
    short: 'v',
    kind: 'string',
    // kubectl's help names the type Level and shows no default (0 is its zero value).
    value: 'Level',
    description: `number for the log level verbosity (${PREVIEW_DEBUG_LEVEL} or more: a --dry-run preview says on stderr how it read the copies)`,
  },
];

export function globalFlags(values: FlagValues): GlobalFlags {
  const out: GlobalFlags = {};
  const str = (key: keyof GlobalFlags, name: string): void => {
    const v = stringFlag(values, name);
    if (v !== undefined) (out as Record<string, unknown>)[key] = v;
  };
  str('kubeconfig', 'kubeconfig');
  str('context', 'context');
  str('cluster', 'cluster');
  str('user', 'user');
  str('namespace', 'namespace');
  str('server', 'server');
  str('token', 'token');
  str('username', 'username');
  str('password', 'password');
  str('certificateAuthority', 'certificate-authority');
  str('clientCertificate', 'client-certificate');
  str('clientKey', 'client-key');
  str('tlsServerName', 'tls-server-name');
  str('as', 'as');
  str('asUid', 'as-uid');
  str('cacheDir', 'cache-dir');
  str('requestTimeout', 'request-timeout');
  if (values['as-group'] !== undefined) out.asGroup = arrayFlag(values, 'as-group');
  if (values['insecure-skip-tls-verify'] !== undefined) out.insecureSkipTlsVerify = boolFlag(values, 'insecure-skip-tls-verify');
  if (values['disable-compression'] !== undefined) out.disableCompression = boolFlag(values, 'disable-compression');
  const v = stringFlag(values, 'v');
  if (v !== undefined) out.v = logLevel(v);
  return out;
}

/** A log level as kubectl reads one (klog's Level: a 32-bit whole number, in decimal). */
function logLevel(value: string): number {
  const n = Number(value);
  if (!/^[+-]?\d+$/.test(value) || n < -(2 ** 31) || n >= 2 ** 31)
    throw new CliError(`Error: invalid argument "${value}" for "-v, --v" flag: a whole number is expected (the log level)`);
  return n;
}
