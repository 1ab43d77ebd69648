// Hierarchical resource quotas on the real control plane.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANONICAL_QUANTITIES } from '../../core/quantity/canonical-table.js';
import { formatQuantity, parseQuantity, roundUpToMilli } from '../../core/quantity/quantity.js';
import { TestCluster } from '../support/cluster.js';

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await TestCluster.connect();
});
afterAll(() => cluster.cleanup());

describe('quantities', () => {
  it('print as the API server prints them', async () => {
    const ns = await cluster.namespace('hrq-quantities');
    const serve = async (input: string | number): Promise<string> => {
      const rq = await cluster.admin.create<{ spec: { hard: Record<string, string> } }>(
        `/api/v1/namespaces/${ns}/resourcequotas`,
        { metadata: { name: 'q' }, spec: { hard: { 'requests.storage': input } } },
        { dryRun: 'All' },
      );
      return rq.spec.hard['requests.storage']!;
    };
    // ResourceQuotas refuse negative limits and round limits up to a whole milli-unit; and the API
    // server keeps some texts as typed when they already hold the value exactly ("5.", "1E3").
    const kept = new Set<string | number>(['5.', '+5', '1.001', '1E3', '1e0']);
    const rows = CANONICAL_QUANTITIES.filter(([, canonical]) => !canonical.startsWith('-'));
    const served = await Promise.all(rows.map(async ([input]) => [input, await serve(input)] as const));
    const ours = (input: string | number) => formatQuantity(roundUpToMilli(parseQuantity(input)));
    expect(served).toEqual(rows.map(([input]) => [input, kept.has(input) ? input : ours(input)]));
    // Our canonical text is the server's fixed point too.
    const again = await Promise.all(rows.map(([input]) => serve(ours(input))));
    expect(again).toEqual(rows.map(([input]) => ours(input)));
  });
});
