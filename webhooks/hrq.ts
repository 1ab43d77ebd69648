// The hierarchical quota webhooks (docs/hrq.md):
// - HRQ validation: resource names are checked the way the API server checks a ResourceQuota's,
//   by a server dry-run of one with the same limits (so the rules are always the cluster's own);
// - HRQ quantities (hnc-ts): unquoted numbers (`cpu: 1.5`) become quantity text, which the CRD's
//   int-or-string schema would otherwise refuse;
// - ResourceQuota status: the API server's quota system raises a singleton's status.used before
//   it admits a Pod, Service, PVC ...; refusing that raise when it would exceed an HRQ over the
//   namespace refuses the creation, with the message the user sees.
import { randomBytes } from 'node:crypto';
import { HRQ_RESOURCE_QUOTA_NAME } from '../core/api/constants.js';
import type { HierarchicalResourceQuota } from '../core/api/types.js';
import { parseResourceList } from '../core/hrq/hrq.js';
import { canonicalQuantity, isQuantity } from '../core/quantity/quantity.js';
import { jsonEqual } from '../core/util/equal.js';
import { allow, jsonPointer, type Decision, type JsonPatchOp } from '../core/validation/decision.js';
import { ApiError, type KubeClient } from '../kube/client.js';
import type { Logger } from '../kube/log.js';
import type { QuotaCache, ResourceQuotaObject } from '../kube/quota-cache.js';
import type { QuotaRouter } from './hrq-router.js';
import { CUT_OFF_MESSAGE } from './server.js';
import type { AdmissionRequest } from './review.js';

/** The API server's own quota system writes singleton statuses as this user. */
const APISERVER_USER = 'system:apiserver';
const VALIDATING_RQ_PREFIX = 'hnc-x-k8s-io-hrq-validating-rq-';

export class QuotaWebhooks {
  constructor(
    private readonly client: KubeClient,
    private readonly quotas: QuotaCache,
    private readonly log: Logger,
    /** With several replicas: sends each raise to the leader (absent: this replica decides). */
    private readonly router?: QuotaRouter,
    /** False while this replica cannot reach the API server: its quota caches may be stale. */
    private readonly reachesApiServer: () => boolean = () => true,
  ) {}

  /** Unquoted numbers in spec.hard → canonical quantity text. */
  mutateHrq(r: AdmissionRequest): Decision {
    const hard = (r.object as HierarchicalResourceQuota | undefined)?.spec?.hard ?? {};
    const patch: JsonPatchOp[] = Object.entries(hard)
      .filter(([, v]) => typeof v === 'number' && isQuantity(v))
      .map(([k, v]) => ({ op: 'replace', path: jsonPointer('spec', 'hard', k), value: canonicalQuantity(v) }));
    return allow({ patch });
  }

  async validateHrq(r: AdmissionRequest): Promise<Decision> {
    const hrq = r.object as HierarchicalResourceQuota | undefined;
    const old = r.oldObject as HierarchicalResourceQuota | undefined;
    // Status writes (the controller's) leave the limits alone.
    if (r.operation === 'UPDATE' && jsonEqual(hrq?.spec ?? {}, old?.spec ?? {})) return allow();
    const hard = hrq?.spec?.hard ?? {};
    if (Object.keys(hard).length === 0 || !r.namespace) return allow();
    try {
      await this.client.create(
        `/api/v1/namespaces/${r.namespace}/resourcequotas`,
        {
          apiVersion: 'v1',
          kind: 'ResourceQuota',
          metadata: { name: VALIDATING_RQ_PREFIX + randomBytes(10).toString('hex') },
          spec: { hard },
        },
        { dryRun: 'All' },
      );
      return allow();
    } catch (err) {
      if (err instanceof ApiError && err.code === 422) {
        const message = (err.status?.message ?? err.message).replace(/^ResourceQuota "[^"]*" is invalid: /, '');
        return { allowed: false, code: 422, reason: 'Invalid', message, causes: [{ field: '.spec.hard', message }] };
      }
      this.log.warn({ rid: r.uid, namespace: r.namespace, name: r.name, err: (err as Error).message }, 'could not check HRQ limits');
      return {
        allowed: false,
        code: 500,
        reason: 'InternalError',
        message: `Internal error occurred: could not check the limits: ${(err as Error).message}`,
      };
    }
  }

  /** A usage raise as the API server sends it: judged here when leading (or alone), else by the leader. */
  async resourceQuotaStatus(r: AdmissionRequest): Promise<Decision> {
    // Only the API server's own raises of our singletons are judged; everything else passes.
    if (r.name !== HRQ_RESOURCE_QUOTA_NAME || r.userInfo.username !== APISERVER_USER || !r.namespace) return allow();
    if (this.router && !this.router.isLeader) return this.router.forward(r);
    // The leader (or the only replica) decides from its caches: not while they may be stale.
    if (!this.reachesApiServer()) return { allowed: false, code: 503, reason: 'ServiceUnavailable', message: CUT_OFF_MESSAGE };
    return this.decide(r);
  }

  /** A raise forwarded by another replica: only the leader decides. */
  forwarded(r: AdmissionRequest): Decision {
    if (this.router && !this.router.isLeader)
      return { allowed: false, code: 503, reason: 'ServiceUnavailable', message: 'this HNC replica no longer leads; try again' };
    return this.decide(r);
  }

  private decide(r: AdmissionRequest): Decision {
    if (r.name !== HRQ_RESOURCE_QUOTA_NAME || r.userInfo.username !== APISERVER_USER || !r.namespace) return allow();
    if (!this.quotas.synced)
      return {
        allowed: false,
        code: 503,
        reason: 'ServiceUnavailable',
        message: 'HNC is starting: hierarchical quotas are not loaded yet',
      };
    const rq = r.object as ResourceQuotaObject | undefined;
    const old = r.oldObject as ResourceQuotaObject | undefined;
    const proposed = parseResourceList(rq?.status?.used).quantities;
    const decision = this.quotas.model.admit(r.namespace, proposed);
    if (!decision.allowed) {
      this.log.info(
        { rid: r.uid, namespace: r.namespace, exceeded: decision.exceeded.namespace, hrq: decision.exceeded.hrq },
        'refused usage over a hierarchical quota',
      );
      return { allowed: false, code: 403, reason: 'Forbidden', message: decision.message };
    }
    if (decision.increases.size > 0 && !r.dryRun) this.quotas.reserve(r.namespace, proposed, old?.metadata.resourceVersion);
    return allow();
  }
}
