// The soak run: teams set up, then cycles of load with one seeded fault each, every cycle ending
// in a quiet point where the independent checker must find the cluster settled within 60 s and
// no user's object lost; the HRQ watch runs throughout. Returns the figures.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError, type KubeClient } from '../kube/client.js';
import { Checker } from './checker.js';
import { hncObject } from './kinds.js';
import { FaultInjector, type Fault, type FaultKind, type FaultTarget } from './faults.js';
import { figures, table, type Figures, type QuietPoint } from './figures.js';
import { Prng } from './prng.js';
import { QuotaWatch } from './quota.js';
import { RequestLog } from './requests.js';
import { Admin, Lead, type Judged } from './users.js';
import { World, type Team } from './world.js';

const HNC = '/apis/hnc.x-k8s.io/v1alpha2';
const TEAMS = ['a', 'b', 'c'];
const PREFIX = 'soak-';
const LOAD_MS = 30_000;
const SETTLE_MS = 60_000;
const SERVICES_HARD = 4;

export interface SoakOptions {
  minutes: number;
  seed: number;
  /** Where the request log and the figures are written. */
  outDir: string;
  admin: KubeClient;
  /** A client as a user of that name, with its own client certificate. */
  userClient(name: string): Promise<KubeClient>;
  /** What the faults act on; none when absent (a dry run against a cluster without a node). */
  faults?: FaultTarget;
  /** Fault kinds to inject first, in this order, before the seeded choice. */
  faultOrder?: FaultKind[];
  log(line: string): void;
  /** Called after each quiet point (e.g. to keep the manager pods' logs before a fault deletes a pod). */
  afterQuietPoint?(): void;
}

export const inScope = (ns: string) => ns.startsWith(PREFIX);

export async function runSoak(opts: SoakOptions): Promise<Figures> {
  const world = new World();
  const requests = new RequestLog(join(opts.outDir, 'soak-requests.jsonl'));
  const judged: Judged = { right: 0, questionable: [] };
  const checker = new Checker(opts.admin, inScope);
  const leads: Lead[] = [];
  for (const [i, name] of TEAMS.entries()) {
    const team = await createTeam(opts.admin, name);
    world.teams.push(team);
    const user = `soak-lead-${name}`;
    leads.push(new Lead(user, await opts.userClient(user), team, world, new Prng(opts.seed + 7919 * (i + 1)), requests, judged));
  }
  const admin = new Admin(opts.admin, new Prng(opts.seed + 104_729), requests);
  const injector = opts.faults && new FaultInjector(opts.faults, new Prng(opts.seed), [...(opts.faultOrder ?? [])]);
  const quota = new QuotaWatch(opts.admin, world);
  const quietPoints: QuietPoint[] = [];
  const faults: Fault[] = [];
  const baseline = await quietPoint(checker, world, Date.now(), undefined);
  opts.log(`soak: teams ready; the first quiet point ${baseline.settled ? `settled in ${baseline.quietSeconds} s` : 'did not settle'}`);
  quietPoints.push(baseline);
  quota.start();
  const deadline = Date.now() + opts.minutes * 60_000;
  const cyclePrng = new Prng(opts.seed + 1);
  try {
    while (Date.now() < deadline) {
      const load = startLoad(leads, admin, new Prng(cyclePrng.int(0, 2 ** 31)));
      await new Promise((r) => setTimeout(r, cyclePrng.int(2_000, 10_000)));
      const fault = injector ? await injector.inject(injector.choose()) : undefined;
      if (fault) faults.push(fault);
      const loadUntil = fault ? Math.max(fault.startedAt + LOAD_MS, fault.endedAt + 5_000) : Date.now() + LOAD_MS;
      await new Promise((r) => setTimeout(r, Math.max(0, loadUntil - Date.now())));
      await load.stop();
      const q = await quietPoint(checker, world, fault?.endedAt ?? Date.now(), fault);
      quietPoints.push(q);
      opts.afterQuietPoint?.();
      opts.log(
        `soak: after ${fault?.kind ?? 'no fault'}: ${q.settled ? `settled ${q.settleSeconds} s after the fault ended` : `NOT settled: ${q.divergences.slice(0, 5).join('; ')}`}` +
          `${q.lost.length ? `; LOST ${q.lost.join('; ')}` : ''}; ${requests.records.length} requests so far`,
      );
    }
  } finally {
    await quota.stop();
    await requests.close();
  }
  const f = figures({
    seed: opts.seed,
    minutes: opts.minutes,
    quietPoints,
    faults,
    requests: requests.records,
    overAdmissions: quota.overAdmissions,
    quotaSamples: quota.samples,
    judged,
  });
  writeFileSync(
    join(opts.outDir, 'soak-figures.json'),
    `${JSON.stringify({ ...f, faultLog: faults, quietPointLog: quietPoints }, null, 2)}\n`,
  );
  opts.log(`soak figures (seed ${opts.seed}, ${opts.minutes} min):\n${table(f)}`);
  return f;
}

/** A team: a root and two full namespaces below it, its lead admin of the root, and an HRQ on services. */
async function createTeam(admin: KubeClient, name: string): Promise<Team> {
  const root = `${PREFIX}${name}`;
  const movable = [`${root}-x`, `${root}-y`];
  for (const ns of [root, ...movable]) await admin.create('/api/v1/namespaces', { metadata: { name: ns } });
  for (const ns of movable)
    await retryWhileHncStarts(() =>
      admin.create(`${HNC}/namespaces/${ns}/hierarchyconfigurations`, hncObject('HierarchyConfiguration', 'hierarchy', { parent: root })),
    );
  await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${root}/rolebindings`, {
    metadata: { name: 'lead-admin' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: `soak-lead-${name}` }],
  });
  await admin.create(
    `${HNC}/namespaces/${root}/hierarchicalresourcequotas`,
    hncObject('HierarchicalResourceQuota', 'team-quota', { hard: { services: String(SERVICES_HARD) } }),
  );
  return {
    name,
    root,
    movable,
    parentOf: new Map([[root, undefined], ...movable.map((m): [string, string] => [m, root])]),
    subnamespaces: new Set(),
    cascading: new Set(),
    servicesHard: SERVICES_HARD,
    serial: 0,
    createdAt: new Map(),
  };
}

/** A HierarchyConfiguration for a namespace HNC has not seen yet is refused with 503 for a moment. */
async function retryWhileHncStarts<T>(fn: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 503) || i > 100) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Every actor steps until stop(); the admin edits the configuration now and then. */
function startLoad(leads: Lead[], admin: Admin, prng: Prng): { stop(): Promise<void> } {
  let running = true;
  const pause = (min: number, max: number) => new Promise((r) => setTimeout(r, prng.int(min, max)));
  const loop = async (step: () => Promise<void>, min: number, max: number) => {
    while (running) {
      await step();
      await pause(min, max);
    }
  };
  const loops = [...leads.map((l) => loop(() => l.step(), 100, 500)), loop(() => admin.step(), 8_000, 20_000)];
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** The load has stopped: HNC gets SETTLE_MS to make the cluster what the checker says it must be; then users' objects are checked. */
async function quietPoint(checker: Checker, world: World, faultEnded: number, fault: Fault | undefined): Promise<QuietPoint> {
  const t0 = Date.now();
  let divergences: string[] = ['not checked yet'];
  while (Date.now() - t0 < SETTLE_MS) {
    divergences = await checker
      .divergences()
      .catch((err: unknown) => [`the checker could not read the cluster: ${(err as Error).message}`]);
    if (!divergences.length) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const settled = !divergences.length;
  const now = Date.now();
  const lost = await world.lostObjects(checker.client);
  await world.resolveUncertain();
  return {
    at: new Date(now).toISOString(),
    fault: fault?.kind,
    settled,
    settleSeconds: settled ? Math.round((now - faultEnded) / 100) / 10 : undefined,
    quietSeconds: settled ? Math.round((now - t0) / 100) / 10 : undefined,
    divergences,
    lost,
  };
}
