// `tsx bench/webhook-attack.ts [--attackers 60] [--seconds 8] [--rate 100] [--server <webhooks/server.ts>]`
//
// Ordinary reviews while unauthenticated clients flood the webhook server with deeply nested JSON
// (3 MB of `[[[…]]]`, under the body limit), all on 127.0.0.1: the webhook server (plain
// WebhookServer, a handler that allows) runs in a child process with the Deployment's heap limit,
// so its peak RSS is its own, and the attackers run in a process of their own, so the ordinary
// reviews' client is not slowed by sending the attack. Prints the ordinary reviews' latency at rest and under attack, and
// the child's peak RSS. --server points at another copy of webhooks/server.ts (e.g. an older
// checkout) to compare. Not a test: nothing here fails on a time.
import { fork, type ChildProcess } from 'node:child_process';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { summarize, type Summary } from './util.js';
import type { WebhookServer } from '../webhooks/server.js';

const { values: flags } = parseArgs({
  options: {
    attackers: { type: 'string', default: '60' },
    seconds: { type: 'string', default: '8' },
    rate: { type: 'string', default: '100' },
    depth: { type: 'string', default: '1500000' },
    server: { type: 'string' },
    child: { type: 'boolean', default: false },
    attacker: { type: 'string' },
  },
  strict: true,
});

const HERE = fileURLToPath(new URL('.', import.meta.url));
const PATH = '/validate-v1-namespace';

type ChildMessage = { port: number } | { peakRssMB: number; rssMB: number };

async function child(): Promise<void> {
  const module = (await import(pathToFileURL(resolvePath(flags.server ?? `${HERE}/../webhooks/server.ts`)).href)) as {
    WebhookServer: typeof WebhookServer;
  };
  const { cert, key } = JSON.parse(process.env.ATTACK_TLS!) as { cert: string; key: string };
  const quiet = () => undefined;
  const logger = { info: quiet, warn: quiet, error: quiet, debug: quiet, child: () => logger } as never;
  const server = new module.WebhookServer({ host: '127.0.0.1', port: 0, cert, key, isReady: () => true, logger });
  server.route(PATH, () => ({ allowed: true }));
  const port = await server.start();
  process.send!({ port } satisfies ChildMessage);
  process.on('message', () => {
    const status = readFileSync('/proc/self/status', 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) / 1024;
    process.send!({ peakRssMB: kb('VmHWM'), rssMB: kb('VmRSS') } satisfies ChildMessage);
  });
  process.on('disconnect', () => process.exit(0));
}

const ordinary = (i: number) =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `u-${i}`,
      kind: { group: '', version: 'v1', kind: 'Namespace' },
      resource: { group: '', version: 'v1', resource: 'namespaces' },
      name: `ns-${i}`,
      operation: 'CREATE',
      userInfo: { username: 'alice', groups: ['system:authenticated'] },
      object: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${i}`, labels: { team: 'a' } } },
    },
  });

function post(agent: https.Agent, port: number, body: string | Buffer): Promise<number> {
  return new Promise((resolve) => {
    const req = https.request(
      { host: '127.0.0.1', port, path: PATH, method: 'POST', agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(-1));
      },
    );
    req.setTimeout(60_000, () => req.destroy());
    req.on('error', () => resolve(-1));
    req.end(body);
  });
}

/** Ordinary reviews at `rate`/s (fixed spacing) for `seconds`: latency of each, and how many failed. */
async function ordinaryLoad(port: number, ca: string, rate: number, seconds: number): Promise<Summary & { errors: number }> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 256, ca });
  const times: number[] = [];
  let errors = 0;
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(
      (async () => {
        const t = performance.now();
        const status = await post(agent, port, ordinary(i));
        times.push(performance.now() - t);
        if (status !== 200) errors++;
      })(),
    );
  }
  await Promise.all(pending);
  agent.destroy();
  return { ...summarize(times), errors };
}

async function parent(): Promise<void> {
  const { CertificateAuthority } = await import('../kube/pki.js');
  const ca = await CertificateAuthority.create('attack-ca');
  const pair = await ca.issue({ commonName: 'webhook', usage: 'server', ips: ['127.0.0.1'] });
  const args = ['--child', ...(flags.server ? ['--server', flags.server] : [])];
  const proc: ChildProcess = fork(fileURLToPath(import.meta.url), args, {
    execArgv: ['--max-old-space-size=384', '--import', 'tsx'],
    env: { ...process.env, ATTACK_TLS: JSON.stringify({ cert: pair.cert, key: pair.key }) },
  });
  const next = () => new Promise<ChildMessage>((r) => proc.once('message', (m) => r(m as ChildMessage)));
  const { port } = (await next()) as { port: number };
  const rate = Number(flags.rate);
  const seconds = Number(flags.seconds);
  const depth = Number(flags.depth);
  await ordinaryLoad(port, ca.certPem, rate, 1); // warm-up
  const atRest = await ordinaryLoad(port, ca.certPem, rate, seconds);
  proc.send('rss');
  const rest = (await next()) as { peakRssMB: number };

  const attackers = fork(
    fileURLToPath(import.meta.url),
    ['--attacker', String(port), '--attackers', flags.attackers!, '--depth', flags.depth!],
    {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, ATTACK_CA: ca.certPem },
    },
  );
  await new Promise((r) => attackers.once('message', r)); // started
  await new Promise((r) => setTimeout(r, 1000));
  const underAttack = await ordinaryLoad(port, ca.certPem, rate, seconds);
  proc.send('rss');
  const peak = (await next()) as { peakRssMB: number; rssMB: number };
  attackers.send('stop');
  const answers = await Promise.race([
    new Promise<Record<string, number>>((r) => attackers.once('message', (m) => r(m as Record<string, number>))),
    new Promise<Record<string, number>>((r) => setTimeout(() => r({}), 30_000)),
  ]);
  attackers.kill();
  proc.disconnect();
  const line = (name: string, s: Summary & { errors: number }) =>
    `${name}: p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, max ${s.max.toFixed(1)} ms, ${s.errors} of ${s.n} failed`;
  process.stdout.write(
    [
      `server: ${flags.server ?? 'webhooks/server.ts'}; ${flags.attackers} attackers, ${2 * depth} bytes each, ${depth} deep; ordinary reviews at ${rate}/s for ${seconds} s`,
      line('at rest', atRest),
      line('under attack', underAttack),
      `attack answers by status (-1: reset/error): ${JSON.stringify(answers)}`,
      `peak RSS: ${rest.peakRssMB.toFixed(0)} MB at rest, ${peak.peakRssMB.toFixed(0)} MB after the attack`,
      '',
    ].join('\n'),
  );
  process.exit(0);
}

/** Attackers in a loop until told to stop; then the answers they got, by status. */
async function attacker(): Promise<void> {
  const port = Number(flags.attacker);
  const depth = Number(flags.depth);
  const attack = Buffer.from('['.repeat(depth) + ']'.repeat(depth));
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1024, ca: process.env.ATTACK_CA });
  let stop = false;
  const answers: Record<string, number> = {};
  const loop = async () => {
    while (!stop) {
      const code = await post(agent, port, attack);
      answers[code] = (answers[code] ?? 0) + 1;
    }
  };
  const loops = Array.from({ length: Number(flags.attackers) }, loop);
  process.send!('started');
  process.on('message', () => {
    stop = true;
    void Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, 20_000))]).then(() => {
      process.send!(answers);
      agent.destroy();
    });
  });
}

await (flags.child ? child() : flags.attacker ? attacker() : parent());
