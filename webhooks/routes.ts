// Which handler answers each webhook path, and the shape its reviews must have: one table for the
// admission worker and for webhooks served on the main thread (--webhooks-on-main-thread).
import { Webhook } from '../core/api/constants.js';
import { allow } from '../core/validation/decision.js';
import { PROBE_PATH } from './configurations.js';
import type { AdmissionHandlers } from './handlers.js';
import type { WebhookServer } from './server.js';
import { HIERARCHY_CONFIGURATION, HNC_CONFIGURATION, SUBNAMESPACE_ANCHOR } from './shapes.js';

/** Paths answered while the caches load: the mutator (the controller labels later) and the reachability probe (it needs none). */
export const ALLOW_WHILE_STARTING: ReadonlySet<string> = new Set([Webhook.namespaceMutator.path, PROBE_PATH]);

/**
 * Paths allowed unjudged while this replica cannot reach the API server: those whose webhooks fail
 * open anyway (the API server would admit on a timeout; a stale cache could only refuse wrongly).
 */
export const ALLOW_WHEN_CUT_OFF: ReadonlySet<string> = new Set([Webhook.namespaceMutator.path, PROBE_PATH, Webhook.objects.path]);

/**
 * Paths whose handler decides for itself while this replica cannot reach the API server: a
 * follower forwards a quota raise to the leader, which needs none of its caches; only a leader cut
 * off refuses it.
 */
export const JUDGED_WHEN_CUT_OFF: ReadonlySet<string> = new Set([Webhook.resourceQuotaStatus.path]);

export function routeAdmission(server: WebhookServer, handlers: AdmissionHandlers): WebhookServer {
  return server
    .route(Webhook.namespaceMutator.path, (r) => handlers.mutateNamespace(r))
    .route(Webhook.namespaces.path, (r) => handlers.namespace(r))
    .route(Webhook.subnamespaceAnchors.path, (r) => handlers.anchor(r), SUBNAMESPACE_ANCHOR)
    .route(Webhook.hierarchyConfigurations.path, (r) => handlers.hierarchyConfiguration(r), HIERARCHY_CONFIGURATION)
    .route(Webhook.hncConfigurations.path, (r) => handlers.hncConfiguration(r), HNC_CONFIGURATION)
    .route(Webhook.objects.path, (r) => handlers.object(r))
    .route(PROBE_PATH, () => allow());
}
