// Kubeconfig files for the local control plane: one per identity, never written to ~/.kube/config.
import { stringify } from 'yaml';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

export interface KubeconfigIdentity {
  server: string;
  caPem: string;
  user: string;
  certPem: string;
  keyPem: string;
  context?: string;
}

export function renderKubeconfig(id: KubeconfigIdentity): string {
  const context = id.context ?? 'hnc-local';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'hnc-local', cluster: { server: id.server, 'certificate-authority-data': b64(id.caPem) } }],
    users: [{ name: id.user, user: { 'client-certificate-data': b64(id.certPem), 'client-key-data': b64(id.keyPem) } }],
    contexts: [{ name: context, context: { cluster: 'hnc-local', user: id.user } }],
    'current-context': context,
  });
}
