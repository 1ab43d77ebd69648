// The benchmark harness, run as `npm run bench -- --quick` runs it (its own control plane, HNC as
// its own process), on one topology. Nothing here is about time: the assertions are the counts
// the benchmark exists to prove (writes equal the minimum, a warm restart writes nothing, every
// copy verified by listing), so a regression in either HNC or the harness fails here.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const out = mkdtempSync(join(tmpdir(), 'hnc-bench-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

interface Writes {
  apiserver: { total: number; byResource: Record<string, number>; byRequest: Record<string, number> };
  manager: number;
  minimum: { namespaces: number; hierarchyconfigurations: number; copies: Record<string, number>; total: number };
}

interface HrqReport {
  coldStart: {
    writes: {
      apiserver: { total: number; byResource: Record<string, number> };
      singletons: number;
      hrqStatus: number;
      minimum: { singletons: number; hrqStatus: number; total: number };
    };
  };
  warmRestart: { writes: { total: number }; managerWrites: number; objectsChanged: { changed: number; created: number; deleted: number } };
  webhook: Array<{ requests: number; byRequest: Record<string, { errors: number }> }>;
  forwarding?: {
    leader: unknown[];
    follower: Array<{ requests: number; byRequest: Record<string, { errors: number }> }>;
    secondReplicaWrites: number;
  };
}

interface Result {
  topology: string;
  coldStart: { writes: Writes; verified: { ok: boolean; copiesMissing: number; copiesUnexpected: number } };
  warmRestart: { writes: { total: number }; managerWrites: number; objectsChanged: { changed: number; created: number; deleted: number } };
  propagation: {
    descendants: number;
    writes: Writes;
    pairedFloors: {
      trials: Array<{ kind: string; update: { hnc: { allMs: number } } }>;
      floorWrites: number;
      floorWritesAtApiserver: number;
      hncWritesDuringFloors: { byResource: Record<string, number> };
      floorObjectsLeft: number;
    };
  };
  move: { writes: Writes };
  webhooks?: {
    reviewFloor?: {
      atRest: { requests: number; byRequest: Record<string, { errors: number }> };
      duringCopy?: { during: { requests: number }; all: { requests: number; byRequest: Record<string, { errors: number }> } };
    };
  };
}

describe('npm run bench -- --quick', () => {
  it('runs end to end and shows minimal writes and a write-free restart, for propagation and HRQs', { timeout: 480_000 }, async () => {
    await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', join(root, 'bench', 'run.ts'), '--quick', '--topology', 'org', '--out', out],
      {
        cwd: root,
        maxBuffer: 32 * 1024 * 1024,
        timeout: 460_000,
      },
    );
    const json = readdirSync(out).find((f) => f.endsWith('.json'));
    expect(json).toBeDefined();
    expect(readdirSync(out)).toContain(json!.replace(/\.json$/, '.md'));
    const report = JSON.parse(readFileSync(join(out, json!), 'utf8')) as { errors: unknown[]; results: Result[]; hrq?: HrqReport };
    expect(report.errors).toEqual([]);
    const [org] = report.results;
    expect(org?.topology).toBe('org');
    const r = org!;

    // Cold start: every copy and label, and one write for each, nothing twice. Beyond the
    // minimum only HNCConfiguration's status (not part of the topology) may be written.
    expect(r.coldStart.verified).toMatchObject({ ok: true, copiesMissing: 0, copiesUnexpected: 0 });
    const cold = r.coldStart.writes;
    expect(cold.apiserver.byResource.namespaces).toBe(cold.minimum.namespaces);
    expect(cold.apiserver.byResource.hierarchyconfigurations).toBe(cold.minimum.hierarchyconfigurations);
    for (const [resource, n] of Object.entries(cold.minimum.copies)) expect(cold.apiserver.byResource[resource] ?? 0, resource).toBe(n);
    expect(cold.apiserver.total - cold.minimum.total, JSON.stringify(cold.apiserver.byResource)).toBeLessThanOrEqual(2);

    expect(r.warmRestart.writes.total).toBe(0);
    expect(r.warmRestart.managerWrites).toBe(0);
    expect(r.warmRestart.objectsChanged).toEqual({ changed: 0, created: 0, deleted: 0 });

    // One object to every descendant, updated, and back: one create, one update (a PUT) and one
    // delete of each copy. Beside them HNC writes only HNCConfiguration's status (its counts, once
    // settled), which falls inside a trial's window when the harness takes longer than the
    // settling time between two phases.
    const D = r.propagation.descendants;
    expect(D).toBeGreaterThan(50);
    const prop = r.propagation.writes;
    const statusWrites = prop.apiserver.byResource.hncconfigurations ?? 0;
    // One after each phase that moves the counts (create, delete), one more if a pause of the
    // harness or the API server outlasts the settling time mid-phase; a write loop makes hundreds.
    expect(statusWrites).toBeLessThanOrEqual(3 * r.propagation.pairedFloors.trials.length);
    expect(prop.minimum.total).toBe(3 * D);
    expect(prop.apiserver.total - statusWrites).toBe(prop.minimum.total);
    const [t] = r.propagation.pairedFloors.trials;
    // By resource, the benchmark's own three writes of the source are counted too.
    expect(prop.apiserver.byRequest[`${t!.kind} PUT 200`]).toBe(D + 1);
    expect(prop.apiserver.byResource[t!.kind]).toBe(3 * D + 3);
    expect(Object.keys(prop.apiserver.byResource).filter((k) => k !== 'hncconfigurations')).toEqual([t!.kind]);
    expect(t!.update.hnc.allMs).toBeGreaterThan(0);
    expect(r.move.writes.apiserver.total).toBe(r.move.writes.minimum.total);
    // Each trial had two floors beside it: a create, an update and a delete per descendant each,
    // all of them the loop's (HNC copied none of its objects), none left behind; HNC's only writes
    // meanwhile are its count of sources in HNCConfiguration's status, once it settles (at 20,000
    // namespaces the status was once written 730 times during the floors).
    const pf = r.propagation.pairedFloors;
    expect(pf.trials.length).toBe(1);
    expect(pf.floorWrites).toBe(2 * 3 * D);
    expect(pf.floorWritesAtApiserver).toBe(pf.floorWrites);
    expect(pf.floorObjectsLeft).toBe(0);
    expect(Object.keys(pf.hncWritesDuringFloors.byResource).filter((k) => k !== 'hncconfigurations')).toEqual([]);
    // Two floors a trial, each moving the count of sources twice (create, delete), and a spare.
    expect(pf.hncWritesDuringFloors.byResource.hncconfigurations ?? 0).toBeLessThanOrEqual(2 * 2 * pf.trials.length + 1);

    // The HRQ phase: one singleton per namespace under an HRQ and one status per HRQ, nothing
    // twice; beyond them only the two webhook configurations gain the HRQ webhooks. A restart
    // writes nothing, and so does a second replica joining.
    const hrq = report.hrq!;
    expect(hrq).toBeDefined();
    const w = hrq.coldStart.writes;
    expect(w.minimum.singletons).toBeGreaterThan(50);
    expect(w.singletons).toBe(w.minimum.singletons);
    expect(w.hrqStatus).toBe(w.minimum.hrqStatus);
    expect(w.apiserver.byResource).toEqual({
      resourcequotas: w.minimum.singletons,
      hierarchicalresourcequotas: w.minimum.hrqStatus,
      validatingwebhookconfigurations: 1,
      mutatingwebhookconfigurations: 1,
    });
    expect(hrq.warmRestart.writes.total).toBe(0);
    expect(hrq.warmRestart.managerWrites).toBe(0);
    expect(hrq.warmRestart.objectsChanged).toEqual({ changed: 0, created: 0, deleted: 0 });
    expect(hrq.forwarding?.secondReplicaWrites).toBe(0);
    // Every review of the quota webhook was answered (allowed or refused), directly and forwarded.
    for (const run of [...hrq.webhook, ...(hrq.forwarding?.follower ?? [])]) {
      expect(run.requests).toBeGreaterThan(0);
      expect(Object.values(run.byRequest).reduce((n, x) => n + x.errors, 0)).toBe(0);
    }
    // The review floor answered every review of its two loads, at rest and while a Role was copied.
    const floor = r.webhooks?.reviewFloor;
    expect(floor?.atRest.requests).toBeGreaterThan(0);
    expect(floor?.duringCopy?.during.requests).toBeGreaterThan(0);
    const errors = (run: { byRequest: Record<string, { errors: number }> }) =>
      Object.values(run.byRequest).reduce((n, x) => n + x.errors, 0);
    expect(errors(floor!.atRest)).toBe(0);
    expect(errors(floor!.duringCopy!.all)).toBe(0);
  });
});
