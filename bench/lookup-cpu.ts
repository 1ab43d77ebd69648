// `tsx bench/lookup-cpu.ts [--rate 150] [--seconds 6] [--rounds 3]`
//
// What one SubjectAccessReview costs the thread that sends it, over node's https (KubeClient's
// default) and over hnc-ts's lean HTTP/1.1 transport (kube/http1-transport.ts, `transport: 'http1'`):
// the admission thread sends two for one review in seven of the benchmark's mix, about 150 a
// second at 500 reviews/s. The API server is stood in for by a node https server in a process of
// its own, answering every SubjectAccessReview with an API server's headers and an allowed status,
// so the CPU measured here (this process's, per request) is the client's alone. Open loop at
// `rate`; the two transports alternate, `rounds` times each. Not a test: nothing fails on a time.
import { fork } from 'node:child_process';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeClient } from '../kube/client.js';
import { CertificateAuthority } from '../kube/pki.js';

const { values: flags } = parseArgs({
  options: {
    rate: { type: 'string', default: '150' },
    seconds: { type: 'string', default: '6' },
    rounds: { type: 'string', default: '3' },
  },
  strict: true,
});

// The stand-in API server: plain node, no TypeScript, answers as kube-apiserver does (JSON, Content-Length, its usual headers).
const SERVER = `
import https from 'node:https';
import { readFileSync } from 'node:fs';
const dir = process.argv[2];
const server = https.createServer({ cert: readFileSync(dir + '/cert.pem'), key: readFileSync(dir + '/key.pem'), keepAliveTimeout: 120000 }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const body = JSON.stringify({ ...review, metadata: { creationTimestamp: null, managedFields: [] }, status: { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters"' } });
    res.writeHead(201, {
      'audit-id': '6c1f3a4e-0000-4000-8000-000000000000',
      'cache-control': 'no-cache, private',
      'content-type': 'application/json',
      'x-kubernetes-pf-flowschema-uid': '1d0e9d5a-0000-4000-8000-000000000000',
      'x-kubernetes-pf-prioritylevel-uid': '2b7c4e1f-0000-4000-8000-000000000000',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

const review = {
  apiVersion: 'authorization.k8s.io/v1',
  kind: 'SubjectAccessReview',
  spec: {
    user: 'alice',
    groups: ['team-a', 'system:authenticated'],
    resourceAttributes: {
      verb: 'update',
      group: 'hnc.x-k8s.io',
      version: '*',
      resource: 'hierarchyconfigurations',
      namespace: 'bench-c-17',
    },
  },
};

async function round(client: KubeClient, rate: number, seconds: number): Promise<{ cpuMsPerRequest: number; p50: number; p99: number }> {
  const n = rate * seconds;
  const latencies: number[] = [];
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const sends: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    sends.push(
      client.create<{ status?: { allowed?: boolean } }>('/apis/authorization.k8s.io/v1/subjectaccessreviews', review).then((r) => {
        if (r.status?.allowed !== true) throw new Error('not allowed');
        latencies.push(performance.now() - due);
      }),
    );
  }
  await Promise.all(sends);
  const c = process.cpuUsage(cpu0);
  latencies.sort((a, b) => a - b);
  return {
    cpuMsPerRequest: (c.user + c.system) / 1000 / n,
    p50: latencies[Math.floor(n * 0.5)]!,
    p99: latencies[Math.floor(n * 0.99)]!,
  };
}

async function main(): Promise<void> {
  const rate = Number(flags.rate);
  const seconds = Number(flags.seconds);
  const rounds = Number(flags.rounds);
  const ca = await CertificateAuthority.create('lookup-cpu');
  const serving = await ca.issue({ commonName: 'kube-apiserver', usage: 'server', ips: ['127.0.0.1'] });
  const dir = mkdtempSync(join(tmpdir(), 'lookup-cpu-'));
  writeFileSync(join(dir, 'cert.pem'), serving.cert);
  writeFileSync(join(dir, 'key.pem'), serving.key);
  writeFileSync(join(dir, 'server.mjs'), SERVER);
  const server = fork(join(dir, 'server.mjs'), [dir], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const port = await new Promise<number>((r) => server.once('message', (m: { port: number }) => r(m.port)));
    const snapshot = { server: `https://127.0.0.1:${port}`, tls: { ca: ca.certPem }, headers: { authorization: 'Bearer bench-token' } };
    const clients = {
      node: KubeClient.fromSnapshot(snapshot, () => snapshot.headers, { maxSockets: 32 }),
      http1: KubeClient.fromSnapshot(snapshot, () => snapshot.headers, { maxSockets: 8, transport: 'http1' }),
    };
    // Warm both: connections open, code compiled.
    for (const c of Object.values(clients)) await round(c, rate, 1);
    const results: Record<string, number[]> = { node: [], http1: [] };
    for (let i = 0; i < rounds; i++)
      for (const [name, client] of Object.entries(clients)) {
        const r = await round(client, rate, seconds);
        results[name]!.push(r.cpuMsPerRequest);
        process.stdout.write(
          `${name}: ${r.cpuMsPerRequest.toFixed(3)} CPU ms per SubjectAccessReview (latency p50 ${r.p50.toFixed(2)} / p99 ${r.p99.toFixed(2)} ms)\n`,
        );
      }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    process.stdout.write(
      `median CPU ms per SubjectAccessReview at ${rate}/s: node's https ${median(results.node!).toFixed(3)}, lean http1 ${median(results.http1!).toFixed(3)}\n`,
    );
    for (const c of Object.values(clients)) c.close();
  } finally {
    server.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
