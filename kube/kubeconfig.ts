// A small kubeconfig loader, so that the manager does not load @kubernetes/client-node (its
// generated API models alone cost ~70 MB of memory) just to read a kubeconfig. It follows
// kubectl for the common cases:
//
//   - the source: an explicit path; else KUBECONFIG (a list, merged: for clusters, contexts and
//     users the first file that defines a name wins, and current-context comes from the first
//     file that sets it); else ~/.kube/config; else the pod's service account (in-cluster);
//   - relative file paths resolve against the directory of the kubeconfig that names them;
//   - clusters: server, certificate-authority(-data), insecure-skip-tls-verify, tls-server-name,
//     proxy-url (used by kube/proxy.ts);
//   - users: client-certificate(-data), client-key(-data), token, tokenFile (re-read at most
//     once a minute, so that a rotated token is picked up), username/password, and the
//     impersonation fields as, as-groups, as-uid, as-user-extra.
//
// Users with an exec credential plugin or an auth-provider are not handled here: the result then
// says so (kind 'client-node') and carries the merged kubeconfig, for the caller to hand to
// client-node, which runs the plugin. Only those configurations pay for client-node.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { parse } from 'yaml';

/** Where a pod's service-account credentials are mounted. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** How often a token file is read again at most. */
export const TOKEN_FILE_REFRESH_MS = 60_000;

export interface TlsOptions {
  /** Trusted roots for the API server's certificate; none: the system's. */
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  rejectUnauthorized: boolean;
  servername?: string;
}

export type Headers = Record<string, string | string[]>;

/** A kubeconfig resolved to what a client needs. */
export interface ClusterConnection {
  kind: 'direct';
  server: string;
  tls: TlsOptions;
  /** The cluster's proxy-url: every request goes through it (kube/proxy.ts; otherwise HTTPS_PROXY and NO_PROXY). */
  proxyUrl?: string;
  /**
   * The headers for the next request (credentials, impersonation); a token file is re-read at most
   * once a minute, or now if `rejected` (the API server has just refused the token it holds).
   */
  headers(rejected?: boolean): Headers;
  /** The context used; undefined in-cluster. */
  context?: string;
  namespace?: string;
  /** Where the configuration came from: files, or "in-cluster". */
  source: string;
}

/** The user authenticates with an exec plugin or an auth-provider: client-node must handle it. */
export interface ClientNodeNeeded {
  kind: 'client-node';
  /** Why, for messages: e.g. `user "x" uses an exec credential plugin`. */
  reason: string;
  context: string;
  /** The merged kubeconfig, with file paths made absolute and current-context set to `context`. */
  config: RawKubeconfig;
  source: string;
}

export type LoadedKubeconfig = ClusterConnection | ClientNodeNeeded;

export interface LoadOptions {
  /** A kubeconfig file; otherwise the default chain. */
  path?: string;
  /** The context to use instead of current-context. */
  context?: string;
  /** Where KUBECONFIG, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are read (default: process.env). */
  env?: Record<string, string | undefined>;
  /** The home directory holding .kube/config (default: os.homedir()). */
  home?: string;
  /** Where the service account is mounted, for in-cluster configuration. */
  serviceAccountDir?: string;
  /** The clock for token-file refreshes (tests). */
  now?: () => number;
  /** kubectl's connection flags, applied over the kubeconfig (see KubeconfigOverrides). */
  overrides?: KubeconfigOverrides;
}

/**
 * kubectl's global connection flags, with kubectl's meaning: `cluster`/`user` pick other entries of
 * the kubeconfig; the others replace fields of the chosen cluster and user. Beyond kubectl, any
 * credential flag (token, client certificate/key, username/password) replaces all of the user's
 * credentials (kubectl would send both and the API server would use the certificate), and a file
 * flag replaces the matching inline data (kubectl refuses both). With `server` (or `cluster`) the
 * kubeconfig may be empty or absent, as with kubectl.
 */
export interface KubeconfigOverrides {
  cluster?: string;
  user?: string;
  namespace?: string;
  server?: string;
  certificateAuthority?: string;
  insecureSkipTlsVerify?: boolean;
  tlsServerName?: string;
  token?: string;
  clientCertificate?: string;
  clientKey?: string;
  username?: string;
  password?: string;
  as?: string;
  asGroups?: string[];
  asUid?: string;
}

// The kubeconfig format (only the fields read here are typed; the others are kept as they are).
export interface RawCluster {
  server?: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
  'proxy-url'?: string;
  [field: string]: unknown;
}

export interface RawUser {
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  token?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  as?: string;
  'as-uid'?: string;
  'as-groups'?: string[];
  'as-user-extra'?: Record<string, string[]>;
  exec?: { command?: string; [field: string]: unknown };
  'auth-provider'?: { name?: string; [field: string]: unknown };
  [field: string]: unknown;
}

export interface RawContext {
  cluster?: string;
  user?: string;
  namespace?: string;
  [field: string]: unknown;
}

export interface RawKubeconfig {
  apiVersion: string;
  kind: string;
  clusters: Array<{ name: string; cluster: RawCluster }>;
  users: Array<{ name: string; user: RawUser }>;
  contexts: Array<{ name: string; context: RawContext }>;
  'current-context'?: string;
  [field: string]: unknown;
}

export class KubeconfigError extends Error {
  override name = 'KubeconfigError';
}

/** Loads the kubeconfig the way kubectl does and resolves the context to use. */
export function loadKubeconfig(opts: LoadOptions = {}): LoadedKubeconfig {
  const env = opts.env ?? process.env;
  const now = opts.now ?? Date.now;
  const o = opts.overrides ?? {};
  if (opts.path) return resolveContext(mergeFiles([opts.path], true), opts.context, now, o);
  const list = (env.KUBECONFIG ?? '').split(delimiter).filter((p) => p !== '');
  if (list.length > 0) {
    // kubectl skips the files of the list that do not exist.
    const present = list.filter((p) => existsSync(p));
    if (present.length === 0) throw new KubeconfigError(`none of the files in KUBECONFIG exists (${list.join(delimiter)})`);
    return resolveContext(mergeFiles(present, false), opts.context, now, o);
  }
  const home = join(opts.home ?? homedir(), '.kube', 'config');
  if (existsSync(home)) return resolveContext(mergeFiles([home], true), opts.context, now, o);
  // As kubectl: the flags alone may say where and who (`--server ... --token ...`).
  if (o.server) return resolveContext({ config: mergeFiles([], true).config, source: 'the command-line flags' }, opts.context, now, o);
  if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) {
    if (opts.context)
      throw new KubeconfigError(
        `context "${opts.context}" does not exist: there is no kubeconfig (${home} does not exist) and the in-cluster configuration has no contexts`,
      );
    return inCluster(env.KUBERNETES_SERVICE_HOST, env.KUBERNETES_SERVICE_PORT, opts.serviceAccountDir ?? SERVICE_ACCOUNT_DIR, now);
  }
  throw new KubeconfigError(
    `no kubeconfig: KUBECONFIG is not set, ${home} does not exist, and this is not a pod (KUBERNETES_SERVICE_HOST/PORT are not set)`,
  );
}

/** The configuration of a pod: the API server's Service, the service account's token and CA. */
function inCluster(host: string, port: string, saDir: string, now: () => number): ClusterConnection {
  const tokenPath = join(saDir, 'token');
  const token = new FileToken(tokenPath, now);
  const caPath = join(saDir, 'ca.crt');
  const nsPath = join(saDir, 'namespace');
  return {
    kind: 'direct',
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    tls: { ca: existsSync(caPath) ? readFile(caPath, 'the in-cluster CA') : undefined, rejectUnauthorized: true },
    headers: (rejected) => ({ Authorization: `Bearer ${token.get(rejected)}` }),
    namespace: existsSync(nsPath) ? readFileSync(nsPath, 'utf8').trim() : undefined,
    source: 'in-cluster',
  };
}

interface Merged {
  config: RawKubeconfig;
  source: string;
}

function mergeFiles(files: string[], single: boolean): Merged {
  const config: RawKubeconfig = { apiVersion: 'v1', kind: 'Config', clusters: [], users: [], contexts: [] };
  const seen = { clusters: new Set<string>(), users: new Set<string>(), contexts: new Set<string>() };
  for (const file of files) {
    const raw = readKubeconfigFile(file);
    const dir = dirname(resolve(file));
    const add = <K extends 'clusters' | 'users' | 'contexts'>(
      key: K,
      entries: RawKubeconfig[K],
      fix: (e: RawKubeconfig[K][number]) => RawKubeconfig[K][number],
    ) => {
      for (const e of entries) {
        if (seen[key].has(e.name)) continue;
        seen[key].add(e.name);
        (config[key] as Array<RawKubeconfig[K][number]>).push(fix(e));
      }
    };
    add('clusters', raw.clusters, (e) => ({ name: e.name, cluster: absolutePaths(e.cluster, dir, ['certificate-authority']) }));
    add('users', raw.users, (e) => ({ name: e.name, user: absoluteUserPaths(e.user, dir) }));
    add('contexts', raw.contexts, (e) => e);
    if (config['current-context'] === undefined && raw['current-context']) config['current-context'] = raw['current-context'];
  }
  return { config, source: single ? (files[0] ?? 'no file') : `KUBECONFIG=${files.join(delimiter)}` };
}

function absolutePaths<T extends Record<string, unknown>>(entry: T, dir: string, fields: string[]): T {
  const out: Record<string, unknown> = { ...entry };
  for (const f of fields) {
    const v = out[f];
    if (typeof v === 'string' && v !== '' && !isAbsolute(v)) out[f] = join(dir, v);
  }
  return out as T;
}

function absoluteUserPaths(user: RawUser, dir: string): RawUser {
  const out = absolutePaths(user, dir, ['client-certificate', 'client-key', 'tokenFile']);
  // As kubectl: an exec command given as a relative path (not a bare name looked up in PATH)
  // is relative to the kubeconfig's directory.
  const cmd = out.exec?.command;
  if (out.exec && typeof cmd === 'string' && cmd.includes(sep) && !isAbsolute(cmd)) out.exec = { ...out.exec, command: join(dir, cmd) };
  return out;
}

function readKubeconfigFile(file: string): RawKubeconfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new KubeconfigError(`cannot read the kubeconfig ${file}: ${(err as Error).message}`, { cause: err });
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new KubeconfigError(`cannot parse the kubeconfig ${file}: ${(err as Error).message}`, { cause: err });
  }
  if (doc === null || doc === undefined) doc = {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new KubeconfigError(`the kubeconfig ${file} is not a YAML mapping`);
  const d = doc as Record<string, unknown>;
  const list = <V>(
    key: 'clusters' | 'users' | 'contexts',
    inner: 'cluster' | 'user' | 'context',
  ): Array<{ name: string } & Record<typeof inner, V>> => {
    const v = d[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw new KubeconfigError(`the kubeconfig ${file}: ${key} is not a list`);
    return v.map((e: unknown, i) => {
      if (!e || typeof e !== 'object') throw new KubeconfigError(`the kubeconfig ${file}: ${key}[${i}] is not a mapping`);
      const { name, [inner]: body } = e as Record<string, unknown>;
      if (typeof name !== 'string' || name === '') throw new KubeconfigError(`the kubeconfig ${file}: ${key}[${i}] has no name`);
      if (body !== undefined && body !== null && typeof body !== 'object')
        throw new KubeconfigError(`the kubeconfig ${file}: ${key}[${i}] ("${name}"): ${inner} is not a mapping`);
      return { name, [inner]: (body ?? {}) as V } as { name: string } & Record<typeof inner, V>;
    });
  };
  const current = d['current-context'];
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: list<RawCluster>('clusters', 'cluster'),
    users: list<RawUser>('users', 'user'),
    contexts: list<RawContext>('contexts', 'context'),
    'current-context': typeof current === 'string' && current !== '' ? current : undefined,
  };
}

function resolveContext(
  { config, source }: Merged,
  override: string | undefined,
  now: () => number,
  o: KubeconfigOverrides,
): LoadedKubeconfig {
  const where = `in the kubeconfig (${source})`;
  // Flags that name the cluster (or its server) make a context unnecessary, as in kubectl.
  const flagsSuffice = !!(o.server || o.cluster);
  const name = override || config['current-context'];
  let ctx = name ? config.contexts.find((c) => c.name === name)?.context : undefined;
  const hasContext = ctx !== undefined;
  if (!ctx) {
    if (override) throw new KubeconfigError(`context "${override}" does not exist ${where}`);
    if (!flagsSuffice) {
      if (!name) throw new KubeconfigError(`the kubeconfig names no current context (${source}); set current-context or pass a context`);
      throw new KubeconfigError(`the current context "${name}" does not exist ${where}`);
    }
    ctx = {};
  }
  const contextName = name ?? 'kubectl-flags';
  const clusterName = o.cluster || ctx.cluster;
  let cluster: RawCluster = {};
  if (clusterName) {
    const found = config.clusters.find((c) => c.name === clusterName)?.cluster;
    if (found) cluster = found;
    else if (o.cluster) throw new KubeconfigError(`cluster "${o.cluster}" does not exist ${where}`);
    else if (!o.server) throw new KubeconfigError(`cluster "${clusterName}" (of context "${contextName}") does not exist ${where}`);
  } else if (!o.server) {
    throw new KubeconfigError(`context "${contextName}" names no cluster ${where}`);
  }
  cluster = overrideCluster(cluster, o);
  const userName = o.user || ctx.user;
  let user: RawUser = {};
  if (userName) {
    const u = config.users.find((e) => e.name === userName)?.user;
    if (!u) {
      if (o.user) throw new KubeconfigError(`user "${o.user}" does not exist ${where}`);
      throw new KubeconfigError(`user "${userName}" (of context "${contextName}") does not exist ${where}`);
    }
    user = u;
  }
  user = overrideUser(user, o);
  const namespace = o.namespace || ctx.namespace || undefined;
  if (user.exec || user['auth-provider']) {
    const reason = user.exec
      ? `user "${userName}" uses an exec credential plugin`
      : `user "${userName}" uses the auth-provider "${user['auth-provider']?.name ?? '?'}"`;
    // The entries as the flags changed them, so that client-node sees what the flags said.
    const clusterKey = clusterName ?? 'kubectl-flags';
    const userKey = userName ?? 'kubectl-flags';
    const merged: RawKubeconfig = {
      ...config,
      clusters: [...config.clusters.filter((c) => c.name !== clusterKey), { name: clusterKey, cluster }],
      users: [...config.users.filter((u) => u.name !== userKey), { name: userKey, user }],
      contexts: [
        ...config.contexts.filter((c) => c.name !== contextName),
        { name: contextName, context: { ...ctx, cluster: clusterKey, user: userKey, ...(namespace ? { namespace } : {}) } },
      ],
      'current-context': contextName,
    };
    return { kind: 'client-node', reason, context: contextName, config: merged, source };
  }
  const clusterLabel = clusterName ? `cluster "${clusterName}"` : 'the --server flag';
  if (!cluster.server) throw new KubeconfigError(`${clusterLabel} has no server ${where}`);
  const label = `user "${userName ?? '(flags)'}"`;
  const cert = data(user['client-certificate-data'], user['client-certificate'], `the client certificate of ${label}`);
  const key = data(user['client-key-data'], user['client-key'], `the client key of ${label}`);
  if (!!cert !== !!key)
    throw new KubeconfigError(`${label} has a client ${cert ? 'certificate but no client key' : 'key but no client certificate'} ${where}`);
  const hasToken = !!(user.token || user.tokenFile);
  const hasBasic = !!(user.username || user.password);
  if (hasToken && hasBasic) throw new KubeconfigError(`${label} has both a token and a username/password; only one is allowed`);
  return {
    kind: 'direct',
    server: cluster.server,
    tls: {
      ca: data(cluster['certificate-authority-data'], cluster['certificate-authority'], `the CA of ${clusterLabel}`),
      cert,
      key,
      rejectUnauthorized: !isTrue(cluster['insecure-skip-tls-verify']),
      servername: cluster['tls-server-name'] || undefined,
    },
    ...(cluster['proxy-url'] ? { proxyUrl: cluster['proxy-url'] } : {}),
    headers: userHeaders(user, now),
    context: hasContext ? contextName : undefined,
    namespace,
    source,
  };
}

function overrideCluster(cluster: RawCluster, o: KubeconfigOverrides): RawCluster {
  const out: RawCluster = { ...cluster };
  if (o.server) out.server = o.server;
  // As kubectl: a CA flag or --insecure-skip-tls-verify replaces the kubeconfig's whole CA setting.
  if (o.certificateAuthority || o.insecureSkipTlsVerify) {
    delete out['certificate-authority-data'];
    out['certificate-authority'] = o.certificateAuthority ? resolve(o.certificateAuthority) : undefined;
    out['insecure-skip-tls-verify'] = !!o.insecureSkipTlsVerify;
  }
  if (o.tlsServerName) out['tls-server-name'] = o.tlsServerName;
  return out;
}

function overrideUser(user: RawUser, o: KubeconfigOverrides): RawUser {
  let out: RawUser = { ...user };
  if (o.token || o.clientCertificate || o.clientKey || o.username || o.password) {
    const credentials = new Set(['token', 'tokenFile', 'username', 'password', 'exec', 'auth-provider']);
    for (const f of ['client-certificate', 'client-certificate-data', 'client-key', 'client-key-data']) credentials.add(f);
    out = Object.fromEntries(Object.entries(out).filter(([k]) => !credentials.has(k)));
    if (o.token) out.token = o.token;
    if (o.username) out.username = o.username;
    if (o.password) out.password = o.password;
    if (o.clientCertificate) out['client-certificate'] = resolve(o.clientCertificate);
    if (o.clientKey) out['client-key'] = resolve(o.clientKey);
  }
  if (o.as) out.as = o.as;
  if (o.asGroups && o.asGroups.length > 0) out['as-groups'] = [...o.asGroups];
  if (o.asUid) out['as-uid'] = o.asUid;
  return out;
}

const isTrue = (v: unknown): boolean => v === true || v === 'true';

/** Inline base64 data wins over a file, as in kubectl. */
function data(inline: string | undefined, file: string | undefined, what: string): Buffer | undefined {
  if (inline) return Buffer.from(inline, 'base64');
  if (file) return readFile(file, what);
  return undefined;
}

function readFile(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new KubeconfigError(`cannot read ${what} (${file}): ${(err as Error).message}`, { cause: err });
  }
}

function userHeaders(user: RawUser, now: () => number): (rejected?: boolean) => Headers {
  const fixed: Headers = {};
  if (user.username || user.password)
    fixed.Authorization = `Basic ${Buffer.from(`${user.username ?? ''}:${user.password ?? ''}`).toString('base64')}`;
  if (user.as) fixed['Impersonate-User'] = user.as;
  if (user['as-uid']) fixed['Impersonate-Uid'] = user['as-uid'];
  const groups = user['as-groups'];
  if (Array.isArray(groups) && groups.length > 0) fixed['Impersonate-Group'] = groups.map(String);
  for (const [k, v] of Object.entries(user['as-user-extra'] ?? {}))
    fixed[`Impersonate-Extra-${encodeURIComponent(k)}`] = (Array.isArray(v) ? v : [v]).map(String);
  // A token file wins over an inline token, which stays the fallback when the file cannot be read.
  const token = user.tokenFile ? new FileToken(user.tokenFile, now, user.token) : undefined;
  const staticToken = user.token;
  return (rejected) => {
    const t = token ? token.get(rejected) : staticToken;
    return t ? { ...fixed, Authorization: `Bearer ${t}` } : { ...fixed };
  };
}

/** A bearer token read from a file, read again at most once a minute (tokens are rotated on disk), or when asked. */
class FileToken {
  private value: string;
  private readAt: number;

  constructor(
    private readonly path: string,
    private readonly now: () => number,
    private readonly fallback?: string,
  ) {
    this.readAt = now();
    try {
      this.value = this.read();
    } catch (err) {
      if (!fallback) throw new KubeconfigError(`cannot read the token file ${path}: ${(err as Error).message}`, { cause: err });
      this.value = fallback;
    }
  }

  private read(): string {
    return readFileSync(this.path, 'utf8').trim();
  }

  /** `force`: read the file again whatever the time (the server refused the token; the caller limits how often). */
  get(force = false): string {
    const t = this.now();
    if (force || t - this.readAt >= TOKEN_FILE_REFRESH_MS) {
      this.readAt = t;
      try {
        this.value = this.read();
      } catch {
        // Keep the last token (or the inline one): the file may be in the middle of a rotation.
        if (this.fallback && !this.value) this.value = this.fallback;
      }
    }
    return this.value;
  }
}
