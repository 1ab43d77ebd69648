// From kubectl's global flags to a Session: the project's own kubeconfig loader (kube/kubeconfig.ts)
// reads the kubeconfig the way kubectl does and applies the flags over it; client-node is loaded
// only for a user with an exec credential plugin or an auth-provider, as in the manager.
import type { KubeConfig as ClientNodeKubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../kube/client.js';
import { KubeconfigError, loadKubeconfig, type Headers, type LoadedKubeconfig } from '../kube/kubeconfig.js';
import type { Session } from './api.js';
import { DEFAULT_REQUEST_TIMEOUT, type GlobalFlags } from './cli/global-flags.js';
import { CliError } from './errors.js';
import { parseRequestTimeout } from './flags.js';
import { KubeHncApi } from './kube-api.js';

/** The impersonation headers for --as/--as-group/--as-uid (kubectl's own names). */
export function impersonationHeaders(flags: Pick<GlobalFlags, 'as' | 'asGroup' | 'asUid'>): Headers {
  const headers: Headers = {};
  if (flags.as) headers['Impersonate-User'] = flags.as;
  if ((flags.asGroup?.length ?? 0) > 0 || flags.asUid) {
    if (!flags.as) throw new CliError('Error: requesting uid or groups without impersonating a user (--as-group and --as-uid need --as)');
  }
  if (flags.asGroup && flags.asGroup.length > 0) headers['Impersonate-Group'] = [...flags.asGroup];
  if (flags.asUid) headers['Impersonate-Uid'] = flags.asUid;
  return headers;
}

/** The kubeconfig with the flags applied, resolved to a connection (or to client-node's care). */
export function loadConnection(flags: GlobalFlags, env: Record<string, string | undefined> = process.env): LoadedKubeconfig {
  impersonationHeaders(flags);
  try {
    return loadKubeconfig({
      path: flags.kubeconfig,
      context: flags.context,
      env,
      overrides: {
        cluster: flags.cluster,
        user: flags.user,
        namespace: flags.namespace,
        server: flags.server,
        certificateAuthority: flags.certificateAuthority,
        insecureSkipTlsVerify: flags.insecureSkipTlsVerify,
        tlsServerName: flags.tlsServerName,
        token: flags.token,
        clientCertificate: flags.clientCertificate,
        clientKey: flags.clientKey,
        username: flags.username,
        password: flags.password,
        as: flags.as,
        asGroups: flags.asGroup,
        asUid: flags.asUid,
      },
    });
  } catch (err) {
    if (err instanceof KubeconfigError) throw new CliError(`Error: ${err.message}`);
    throw err;
  }
}

/** client-node, for exec plugins and auth-providers only; impersonation flags are added as headers. */
async function clientNodeClient(loaded: Extract<LoadedKubeconfig, { kind: 'client-node' }>, flags: GlobalFlags): Promise<KubeClient> {
  const { KubeConfig } = await import('./client-node.js');
  const extra = impersonationHeaders(flags);
  type HttpsOptions = Parameters<ClientNodeKubeConfig['applyToHTTPSOptions']>[0];
  class WithHeaders extends KubeConfig {
    override async applyToHTTPSOptions(opts: HttpsOptions): Promise<void> {
      await super.applyToHTTPSOptions(opts);
      opts.headers = { ...(opts.headers ?? {}), ...extra } as HttpsOptions['headers'];
    }
  }
  const kc = new WithHeaders();
  kc.loadFromString(JSON.stringify(loaded.config));
  // No cap on connections, as for the other users (connect).
  return KubeClient.fromKubeConfig(kc, { maxSockets: Infinity });
}

export async function connect(flags: GlobalFlags): Promise<Session> {
  const timeoutMs = parseRequestTimeout(flags.requestTimeout ?? DEFAULT_REQUEST_TIMEOUT);
  const loaded = loadConnection(flags);
  const server = loaded.kind === 'direct' ? loaded.server : undefined;
  if (server !== undefined && !server.startsWith('https://'))
    throw new CliError(`Error: only https API servers are supported; the kubeconfig names ${server}`);
  let client: KubeClient;
  try {
    // No cap on connections: `get --watch` keeps one open per namespace it may not watch cluster-wide.
    client = loaded.kind === 'direct' ? KubeClient.fromConnection(loaded, { maxSockets: Infinity }) : await clientNodeClient(loaded, flags);
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw new CliError(`Error: cannot use the kubeconfig: ${err instanceof Error ? err.message : String(err)}`);
  }
  const namespace =
    flags.namespace ||
    (loaded.kind === 'direct' ? loaded.namespace : loaded.config.contexts.find((c) => c.name === loaded.context)?.context.namespace) ||
    'default';
  return { api: new KubeHncApi(client, timeoutMs), namespace, cacheDir: flags.cacheDir };
}
