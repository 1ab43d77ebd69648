import { describe, expect, it } from 'vitest';
import { sumMetrics } from './hnc-go.js';

const TEXT = `# HELP rest_client_requests_total Number of HTTP requests, partitioned by status code, method, and host.
# TYPE rest_client_requests_total counter
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="GET"} 120
rest_client_requests_total{code="201",host="127.0.0.1:6443",method="POST"} 30
rest_client_requests_total{code="200",host="127.0.0.1:6443",method="PUT"} 12
rest_client_requests_total{code="404",host="127.0.0.1:6443",method="DELETE"} 2
workqueue_depth{name="role"} 3
workqueue_depth{name="hierarchyconfiguration"} 0
go_memstats_heap_alloc_bytes 1.2345e+07
`;

describe("HNC's Go manager's metrics", () => {
  it('sums a metric over its series, keeping only the ones asked for', () => {
    const writes = sumMetrics(TEXT, ['rest_client_requests_total'], (_, labels) => !labels.includes('method="GET"'));
    expect(writes.sums.rest_client_requests_total).toBe(44);
    const all = sumMetrics(TEXT, ['workqueue_depth', 'go_memstats_heap_alloc_bytes', 'controller_runtime_active_workers']);
    expect(all.sums).toEqual({ workqueue_depth: 3, go_memstats_heap_alloc_bytes: 12_345_000, controller_runtime_active_workers: 0 });
    expect([...all.present].sort()).toEqual(['go_memstats_heap_alloc_bytes', 'workqueue_depth']);
  });
});
