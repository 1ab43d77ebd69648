// The watch layer recovers when the API server is restarted under it (a control plane of its own,
// so restarting it disturbs no other test).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalControlPlane } from '../../local-cluster/index.js';
import { KubeClient } from '../../kube/client.js';
import { Reflector } from '../../kube/watch/reflector.js';
import type { KubeObject } from '../../kube/watch/store.js';
import { eventually } from '../support/cluster.js';

let cp: LocalControlPlane;
let client: KubeClient;

beforeAll(async () => {
  cp = await LocalControlPlane.start({ controllerManager: false, log: () => undefined });
  client = await KubeClient.fromKubeconfig(cp.kubeconfigPath);
}, 180_000);
afterAll(() => cp?.stop());

describe('reflector on a real API server', () => {
  it('lists, watches, and resumes after kube-apiserver restarts', async () => {
    const events: string[] = [];
    const reflector = new Reflector<KubeObject>({
      client,
      path: '/api/v1/namespaces',
      pageSize: 2,
      backoff: { initialMs: 100, maxMs: 1000, jitter: 0.2 },
    });
    reflector.addHandler((type, obj) => events.push(`${type} ${obj.metadata?.name}`));
    reflector.start();
    await reflector.synced;
    // Four system namespaces through pages of two.
    expect(reflector.store.keys().sort()).toEqual(expect.arrayContaining(['default', 'kube-node-lease', 'kube-public', 'kube-system']));
    await client.create('/api/v1/namespaces', { metadata: { name: 'before-restart' } });
    await eventually(async () => (reflector.store.get('before-restart') ? true : undefined), 'the watch to deliver a new namespace');
    await cp.restartApiServer();
    await client.create('/api/v1/namespaces', { metadata: { name: 'after-restart' } });
    await client.delete('/api/v1/namespaces/before-restart');
    await eventually(
      async () => (reflector.store.get('after-restart') ? true : undefined),
      'the reflector to see a namespace created after the restart',
      60_000,
    );
    // Without a namespace controller the deleted namespace stays Terminating: a MODIFIED event.
    await eventually(
      async () =>
        (reflector.store.get('before-restart') as { metadata?: { deletionTimestamp?: string } } | undefined)?.metadata?.deletionTimestamp
          ? true
          : undefined,
      'the deletion to show',
    );
    expect(events).toContain('ADDED after-restart');
    await reflector.stop();
  });
});
