// The Writer's metadata-only answers on the real API server (kube/writer.ts, METADATA_ONLY): a copy's
// create or update is answered with its metadata, the new resourceVersion included, not its content.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writer } from '../../kube/writer.js';
import { TestCluster, refusal } from '../support/cluster.js';

let cluster: TestCluster;
let ns: string;

beforeAll(async () => {
  cluster = await TestCluster.connect();
  ns = await cluster.namespace('writer');
});
afterAll(() => cluster?.cleanup());

interface Answer {
  kind?: string;
  metadata?: { name?: string; resourceVersion?: string; uid?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

describe('Writer answers', () => {
  it('are the metadata only when asked, with the resourceVersion the server stored; the whole object otherwise', async () => {
    const writer = new Writer(cluster.admin, { qps: 1000 });
    const configmaps = `/api/v1/namespaces/${ns}/configmaps`;
    const body = (name: string, value: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, labels: { a: 'b' } },
      data: { value },
    });
    const big = 'x'.repeat(20_000);

    const created = await writer.create<Answer>(configmaps, body('meta', big), { answer: 'metadata' });
    expect(created.kind).toBe('PartialObjectMetadata');
    expect(created).not.toHaveProperty('data');
    expect(created.metadata).toMatchObject({ name: 'meta', labels: { a: 'b' } });
    const stored = await cluster.admin.get<Answer>(`${configmaps}/meta`);
    expect(created.metadata?.resourceVersion).toBe(stored.metadata?.resourceVersion);
    expect(created.metadata?.uid).toBe(stored.metadata?.uid);

    const updated = await writer.replace<Answer>(
      `${configmaps}/meta`,
      { ...body('meta', `${big}y`), metadata: { name: 'meta', resourceVersion: created.metadata?.resourceVersion } },
      { answer: 'metadata' },
    );
    expect(updated.kind).toBe('PartialObjectMetadata');
    expect(updated).not.toHaveProperty('data');
    const after = await cluster.admin.get<Answer>(`${configmaps}/meta`);
    expect(updated.metadata?.resourceVersion).toBe(after.metadata?.resourceVersion);
    expect(after.data?.value).toBe(`${big}y`);

    // A refused write still says why (a Status), whatever was asked of its answer.
    const dup = await refusal(writer.create(configmaps, body('meta', 'z'), { answer: 'metadata' }));
    expect(dup.code).toBe(409);
    expect(dup.reason).toBe('AlreadyExists');

    // By default, the whole object.
    const whole = await writer.create<Answer>(configmaps, body('whole', 'v'));
    expect(whole.kind).toBe('ConfigMap');
    expect(whole.data).toEqual({ value: 'v' });
    expect(writer.counts).toEqual({ create: 3, update: 1, patch: 0, delete: 0 });
  });
});
