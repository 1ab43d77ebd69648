// From kubectl's standard flags to a Session: loads the kubeconfig the way kubectl does, applies
// --context/--cluster/--user, adds impersonation headers for --as/--as-group, and builds the API.
// Loaded lazily: it pulls in @kubernetes/client-node.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../kube/client.js';
import type { Session } from './api.js';
import { CliError } from './errors.js';
import { parseRequestTimeout } from './flags.js';
import { KubeHncApi } from './kube-api.js';

/** kubectl's standard flags, as the root command parses them. */
export interface GlobalFlags {
  kubeconfig?: string;
  context?: string;
  cluster?: string;
  user?: string;
  namespace?: string;
  as?: string;
  asGroup?: string[];
  requestTimeout?: string;
}

/** HNC's plugin gives every API call 5 s. */
export const DEFAULT_REQUEST_TIMEOUT = '5s';

type HttpsOptions = Parameters<KubeConfig['applyToHTTPSOptions']>[0];

/**
 * A KubeConfig that adds fixed headers to every request built from it. KubeClient copies the
 * headers applyToHTTPSOptions produces into each request, so this is enough for impersonation
 * without changing KubeClient.
 */
class KubeConfigWithHeaders extends KubeConfig {
  constructor(private readonly extraHeaders: Record<string, string | string[]>) {
    super();
  }
  override async applyToHTTPSOptions(opts: HttpsOptions): Promise<void> {
    await super.applyToHTTPSOptions(opts);
    opts.headers = { ...(opts.headers ?? {}), ...this.extraHeaders } as HttpsOptions['headers'];
  }
}

/** The impersonation headers for --as/--as-group (kubectl's own names). */
export function impersonationHeaders(as: string | undefined, groups: readonly string[] | undefined): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  if (as) headers['Impersonate-User'] = as;
  if (groups && groups.length > 0) {
    if (!as) throw new CliError('Error: requesting groups without impersonating a user (--as-group needs --as)');
    headers['Impersonate-Group'] = [...groups];
  }
  return headers;
}

export function loadKubeConfig(flags: GlobalFlags): KubeConfig {
  const kc = new KubeConfigWithHeaders(impersonationHeaders(flags.as, flags.asGroup));
  try {
    if (flags.kubeconfig) {
      kc.loadFromFile(flags.kubeconfig);
    } else {
      const fromEnv = process.env.KUBECONFIG?.split(process.platform === 'win32' ? ';' : ':').filter((p) => p !== '') ?? [];
      const home = join(homedir(), '.kube', 'config');
      const inCluster = !!process.env.KUBERNETES_SERVICE_HOST;
      if (fromEnv.length === 0 && !existsSync(home) && !inCluster) {
        throw new CliError('Error: no cluster configured: set KUBECONFIG, pass --kubeconfig, or create ~/.kube/config');
      }
      // true: take the current context from the first file, as kubectl does.
      kc.loadFromDefault(undefined, true);
    }
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`Error: cannot load the kubeconfig: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (flags.context) {
    if (!kc.getContextObject(flags.context)) throw new CliError(`Error: context "${flags.context}" does not exist`);
    kc.setCurrentContext(flags.context);
  }
  if (flags.cluster || flags.user) {
    if (flags.cluster && !kc.getCluster(flags.cluster)) throw new CliError(`Error: cluster "${flags.cluster}" does not exist`);
    if (flags.user && !kc.getUser(flags.user)) throw new CliError(`Error: user "${flags.user}" does not exist`);
    const current = kc.getContextObject(kc.getCurrentContext());
    const name = current?.name ?? 'kubectl-hns';
    const patched = {
      name,
      namespace: current?.namespace,
      cluster: flags.cluster ?? current?.cluster ?? '',
      user: flags.user ?? current?.user ?? '',
    };
    kc.contexts = [...kc.contexts.filter((c) => c.name !== name), patched];
    kc.setCurrentContext(name);
  }
  return kc;
}

export async function connect(flags: GlobalFlags): Promise<Session> {
  const timeoutMs = parseRequestTimeout(flags.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT);
  const kc = loadKubeConfig(flags);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new CliError('Error: the kubeconfig has no current cluster (set a current context or pass --context)');
  if (!cluster.server.startsWith('https://'))
    throw new CliError(`Error: only https API servers are supported; the kubeconfig names ${cluster.server}`);
  let client: KubeClient;
  try {
    client = await KubeClient.fromKubeConfig(kc);
  } catch (err) {
    throw new CliError(`Error: cannot use the kubeconfig: ${err instanceof Error ? err.message : String(err)}`);
  }
  const namespace = flags.namespace || kc.getContextObject(kc.getCurrentContext())?.namespace || 'default';
  return { api: new KubeHncApi(client, timeoutMs), namespace };
}
