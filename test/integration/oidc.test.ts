// A kubeconfig user with the `oidc` auth-provider (an ID token from an OpenID Connect issuer), on a
// control plane of its own that trusts a local issuer (kube-apiserver's --oidc-* flags): kubectl hns
// and the manager hand such a user to client-node (kube/kubeconfig.ts), and their requests must
// reach the API server as that user. The issuer is an HTTPS server on 127.0.0.1 serving its
// discovery document and signing key; the token is signed here.
import { createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalControlPlane } from '../../local-cluster/index.js';
import { KubeClient } from '../../kube/client.js';
import { CertificateAuthority } from '../../kube/pki.js';
import { connect } from '../../kubectl-plugin/connection.js';
import { eventually } from '../support/cluster.js';

const CLIENT_ID = 'kubectl-hns';
const USER = 'oidc:alice';
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace' };

let cp: LocalControlPlane;
let issuer: https.Server;
let dir: string;
let kubeconfig: string;

/** An RS256-signed ID token for `sub`, valid for an hour. */
function idToken(iss: string, key: KeyObject, sub: string): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const unsigned = `${b64({ alg: 'RS256', typ: 'JWT', kid: 'test' })}.${b64({ iss, aud: CLIENT_ID, sub, iat: now, exp: now + 3600 })}`;
  return `${unsigned}.${createSign('RSA-SHA256').update(unsigned).sign(key).toString('base64url')}`;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hnc-oidc-'));
  const ca = await CertificateAuthority.create('oidc-issuer');
  const serving = await ca.issue({ commonName: 'issuer', usage: 'server', ips: ['127.0.0.1'] });
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'test', alg: 'RS256', use: 'sig' };
  let url = '';
  issuer = https.createServer(serving, (req, res) => {
    const body =
      req.url === '/.well-known/openid-configuration'
        ? {
            issuer: url,
            jwks_uri: `${url}/keys`,
            authorization_endpoint: `${url}/auth`,
            token_endpoint: `${url}/token`,
            response_types_supported: ['id_token'],
            subject_types_supported: ['public'],
            id_token_signing_alg_values_supported: ['RS256'],
          }
        : req.url === '/keys'
          ? { keys: [jwk] }
          : undefined;
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? {}));
  });
  await new Promise<void>((r) => issuer.listen(0, '127.0.0.1', r));
  url = `https://127.0.0.1:${(issuer.address() as AddressInfo).port}`;
  const caFile = join(dir, 'issuer-ca.crt');
  writeFileSync(caFile, ca.certPem);
  cp = await LocalControlPlane.start({
    log: () => undefined,
    controllerManager: false,
    apiserverFlags: [
      `--oidc-issuer-url=${url}`,
      `--oidc-client-id=${CLIENT_ID}`,
      `--oidc-ca-file=${caFile}`,
      '--oidc-username-claim=sub',
      '--oidc-username-prefix=oidc:',
    ],
  });
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'local', cluster: { server: cp.server, 'certificate-authority-data': Buffer.from(cp.caPem).toString('base64') } }],
      users: [
        {
          name: 'alice',
          user: {
            'auth-provider': {
              name: 'oidc',
              config: { 'idp-issuer-url': url, 'client-id': CLIENT_ID, 'id-token': idToken(url, privateKey, 'alice') },
            },
          },
        },
      ],
      contexts: [{ name: 'local', context: { cluster: 'local', user: 'alice' } }],
      'current-context': 'local',
    }),
  );
}, 180_000);

afterAll(async () => {
  await cp?.stop();
  issuer?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('an oidc auth-provider user', () => {
  it('reaches the API server as that user, from kubectl hns and from the manager’s client', async () => {
    const { api } = await connect({ kubeconfig });
    // Until the API server has read the issuer's keys, the token is not yet accepted (401): then
    // the user is known by name, and not allowed to list namespaces.
    const denied = await eventually(
      () =>
        api.listAll(NAMESPACES, undefined).then(
          () => new Error('listed without a grant'),
          (err: Error) => (/Unauthorized|401/.test(err.message) ? undefined : err),
        ),
      'the API server to accept the ID token',
      60_000,
    );
    expect(denied.message).toContain(`User "${USER}" cannot list resource "namespaces"`);

    const admin = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
    await admin.create('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'oidc-namespace-reader' },
      rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['list'] }],
    });
    await admin.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'oidc-namespace-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'oidc-namespace-reader' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: USER }],
    });
    const names = await eventually(
      () => api.listAll(NAMESPACES, undefined).then((l) => l.items.map((o) => o.metadata?.name)),
      'the grant to take effect',
    );
    expect(names).toContain('default');

    // The manager's loader hands the same user to client-node too.
    const manager = await KubeClient.fromKubeconfig(kubeconfig);
    const list = await manager.request<{ items: Array<{ metadata: { name: string } }> }>('GET', '/api/v1/namespaces');
    expect(list.items.map((o) => o.metadata.name)).toContain('default');
  }, 120_000);
});
