// The review floor (docs/benchmarks.md): the webhook load sent, in the same run, to a server that
// does nothing but answer (bench/review-floor-server.ts), run with HNC's node flags and allocator
// settings. HNC's webhook p99 is reported as a ratio to this floor's, as its write times are to the
// write floor's: the machine's share of a review is then not taken for HNC's.
import type { ChildProcess } from 'node:child_process';
import { CertificateAuthority } from '../kube/pki.js';
import { bundle, endChild, HNC_NODE_ENV, HNC_NODE_FLAGS, spawnChild } from './hnc-process.js';

export class ReviewFloorServer {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    readonly ca: string,
  ) {}

  static async start(): Promise<ReviewFloorServer> {
    const ca = await CertificateAuthority.create('hnc-bench-review-floor');
    const serving = await ca.issue({ commonName: 'review-floor', usage: 'server', ips: ['127.0.0.1'] });
    const { file, execArgv } = await bundle('review-floor-server');
    const child = spawnChild([...new Set([...execArgv, ...HNC_NODE_FLAGS]), file], { env: { ...process.env, ...HNC_NODE_ENV } });
    const port = await new Promise<number>((resolve, reject) => {
      child.once('message', (m: { port?: number }) => (m.port ? resolve(m.port) : reject(new Error(`review floor: ${JSON.stringify(m)}`))));
      child.once('exit', (code) => reject(new Error(`the review floor's server exited (code ${code})`)));
      child.send({ cert: serving.cert, key: serving.key });
    });
    return new ReviewFloorServer(child, port, ca.certPem);
  }

  stop(): Promise<void> {
    return endChild(this.child, 5_000);
  }
}
