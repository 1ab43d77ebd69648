import { describe, expect, it } from 'vitest';
import { forest } from '../core/forest/dsl.js';
import { parseResourceList, QuotaModel, type Quantities } from '../core/hrq/hrq.js';
import type { KubeClient } from '../kube/client.js';
import { createLogger } from '../kube/log.js';
import type { QuotaCache } from '../kube/quota-cache.js';
import { QuotaWebhooks } from './hrq.js';
import { encodeResponse, type AdmissionRequest } from './review.js';
import type { QuotaRouter } from './hrq-router.js';
import { CUT_OFF_MESSAGE } from './server.js';

const q = (l: Record<string, string>) => parseResourceList(l).quantities;

/** The webhooks over a model of `tree`; reservations are recorded. */
function webhooks(tree: string, synced = true) {
  const model = new QuotaModel(forest(tree));
  const reserved: Array<[string, Quantities, string | undefined]> = [];
  const quotas = {
    model,
    synced,
    reserve: (ns: string, used: Quantities, rv: string | undefined) => {
      reserved.push([ns, used, rv]);
      model.reserve(ns, used);
    },
  } as unknown as QuotaCache;
  const log = createLogger({ level: 'silent' });
  return { hooks: new QuotaWebhooks({} as KubeClient, quotas, log), model, reserved };
}

const statusUpdate = (ns: string, used: Record<string, string>, over: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
  uid: 'u',
  kind: { group: '', version: 'v1', kind: 'ResourceQuota' },
  resource: { group: '', version: 'v1', resource: 'resourcequotas' },
  subResource: 'status',
  name: 'hrq.hnc.x-k8s.io',
  namespace: ns,
  operation: 'UPDATE',
  userInfo: { username: 'system:apiserver' },
  object: { metadata: { name: 'hrq.hnc.x-k8s.io', namespace: ns }, status: { used } },
  oldObject: { metadata: { name: 'hrq.hnc.x-k8s.io', namespace: ns, resourceVersion: '41' }, status: {} },
  ...over,
});

describe('the ResourceQuota status webhook', () => {
  it('refuses a raise over an ancestor’s HRQ with HNC’s message, as 403', async () => {
    const { hooks, model } = webhooks('a -> b');
    model.setHrq('a', 'team', q({ services: '1' }));
    model.setUsage('a', q({ services: '1' }));
    expect(await hooks.resourceQuotaStatus(statusUpdate('b', { services: '1' }))).toEqual({
      allowed: false,
      code: 403,
      reason: 'Forbidden',
      message: 'exceeded hierarchical quota in namespace "a": "team", requested: services=1, used: services=1, limited: services=1',
    });
  });

  it('reserves what it admits, against the version it saw, so the next raise counts it', async () => {
    const { hooks, model, reserved } = webhooks('a -> b, a -> c');
    model.setHrq('a', 'team', q({ services: '1' }));
    expect((await hooks.resourceQuotaStatus(statusUpdate('b', { services: '1' }))).allowed).toBe(true);
    expect(reserved.map(([ns, , rv]) => [ns, rv])).toEqual([['b', '41']]);
    expect((await hooks.resourceQuotaStatus(statusUpdate('c', { services: '1' }))).allowed).toBe(false);
    // A dry run reserves nothing.
    expect((await hooks.resourceQuotaStatus(statusUpdate('b', { services: '1' }, { dryRun: true }))).allowed).toBe(true);
    expect(reserved).toHaveLength(1);
  });

  it('judges only the API server’s writes of the singleton, and waits for its caches', async () => {
    const { hooks, model } = webhooks('a');
    model.setHrq('a', 'team', q({ services: '0' }));
    expect((await hooks.resourceQuotaStatus(statusUpdate('a', { services: '1' }, { name: 'mine' }))).allowed).toBe(true);
    expect((await hooks.resourceQuotaStatus(statusUpdate('a', { services: '1' }, { userInfo: { username: 'alice' } }))).allowed).toBe(true);
    expect((await hooks.resourceQuotaStatus(statusUpdate('a', { services: '1' }))).allowed).toBe(false);
    const starting = webhooks('a', false).hooks;
    expect(await starting.resourceQuotaStatus(statusUpdate('a', { services: '1' }))).toMatchObject({ allowed: false, code: 503 });
  });

  it('cut off from the API server: a follower still forwards raises to the leader, a leader refuses them', async () => {
    const { model } = webhooks('a');
    model.setHrq('a', 'team', q({ services: '5' }));
    const quotas = { model, synced: true, reserve: () => undefined } as unknown as QuotaCache;
    const log = createLogger({ level: 'silent' });
    let leading = false;
    const forwarded: string[] = [];
    const router = {
      get isLeader() {
        return leading;
      },
      forward: async (r: AdmissionRequest) => (forwarded.push(r.namespace!), { allowed: true }),
    } as unknown as QuotaRouter;
    const cutOff = new QuotaWebhooks({} as KubeClient, quotas, log, router, () => false);
    expect(await cutOff.resourceQuotaStatus(statusUpdate('a', { services: '1' }))).toEqual({ allowed: true });
    expect(forwarded).toEqual(['a']);
    leading = true;
    expect(await cutOff.resourceQuotaStatus(statusUpdate('a', { services: '1' }))).toEqual({
      allowed: false,
      code: 503,
      reason: 'ServiceUnavailable',
      message: CUT_OFF_MESSAGE,
    });
  });
});

describe('the HRQ quantities mutator', () => {
  it('turns unquoted numbers into quantity text and leaves text alone', () => {
    const { hooks } = webhooks('a');
    const r = statusUpdate('a', {}, { object: { spec: { hard: { cpu: 1.5, pods: 2, memory: '1Gi', 'a/b': 0.1 } } } });
    expect(hooks.mutateHrq(r)).toEqual({
      allowed: true,
      patch: [
        { op: 'replace', path: '/spec/hard/cpu', value: '1500m' },
        { op: 'replace', path: '/spec/hard/pods', value: '2' },
        { op: 'replace', path: '/spec/hard/a~1b', value: '100m' },
      ],
    });
  });
});

describe('field causes in a refusal', () => {
  it('are sent as status.details.causes', () => {
    const answer = JSON.parse(
      encodeResponse('u', {
        allowed: false,
        code: 422,
        reason: 'Invalid',
        message: 'spec.hard[foo]: bad',
        causes: [{ field: '.spec.hard', message: 'spec.hard[foo]: bad' }],
      }),
    ) as { response: { status: unknown } };
    expect(answer.response.status).toEqual({
      metadata: {},
      status: 'Failure',
      code: 422,
      reason: 'Invalid',
      message: 'spec.hard[foo]: bad',
      details: { causes: [{ field: '.spec.hard', message: 'spec.hard[foo]: bad' }] },
    });
  });
});
