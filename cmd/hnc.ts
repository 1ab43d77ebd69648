// Wires one HNC process: the shared caches, the controller, and the webhooks reading the same
// hierarchy. Used by `npm start` and by the integration tests, so both run the same thing.
import { Manager } from '../controller/manager.js';
import type { HierarchyPolicy } from '../core/hierarchy/policy.js';
import type { PropagationOptions } from '../core/propagation/decide.js';
import type { KubeClient } from '../kube/client.js';
import { HierarchyCache } from '../kube/hierarchy-cache.js';
import type { Logger } from '../kube/log.js';
import { Webhooks } from '../webhooks/index.js';
import type { Endpoint } from '../webhooks/configurations.js';

export interface HncOptions {
  client: KubeClient;
  policy: HierarchyPolicy;
  namespace: string;
  logger: Logger;
  workers?: number;
  qps?: number;
  propagation?: PropagationOptions;
  /** The webhooks, or false to run without them. */
  webhooks: false | { port: number; host?: string; endpoint: (port: number) => Endpoint; certDir?: string };
}

export interface Hnc {
  manager: Manager;
  webhooks?: Webhooks;
  stop(): Promise<void>;
}

export async function startHnc(opts: HncOptions): Promise<Hnc> {
  const cache = new HierarchyCache(opts.client, opts.policy, opts.logger);
  const manager = new Manager({ client: opts.client, policy: opts.policy, logger: opts.logger, cache, workers: opts.workers, qps: opts.qps, propagation: opts.propagation });
  let webhooks: Webhooks | undefined;
  if (opts.webhooks) {
    webhooks = new Webhooks({
      client: opts.client,
      cache,
      namespace: opts.namespace,
      port: opts.webhooks.port,
      host: opts.webhooks.host,
      endpoint: opts.webhooks.endpoint,
      certDir: opts.webhooks.certDir,
      propagation: { context: (g, r) => manager.config.context(g, r), propagatingKinds: () => manager.config.propagatingKinds() },
      logger: opts.logger.child({ component: 'webhooks' }),
    });
    // Serving before the caches sync: the server answers "starting up" (503) until then.
    await webhooks.start();
    const wh = webhooks;
    manager.config.onTypes((types) => void wh.setPropagatedTypes(types).catch((err: unknown) => opts.logger.error({ err: (err as Error).message }, 'could not update the objects webhook rules')));
  }
  await cache.start();
  await manager.start();
  return {
    manager,
    webhooks,
    async stop() {
      await webhooks?.stop();
      await manager.stop();
      await cache.stop();
    },
  };
}
