// The run's report: JSON (everything measured) and a markdown table (the figures against the targets).
import type { EventLoops, ScenarioResult } from './scenario.js';
import type { HrqResult } from './hrq.js';
import type { PairedPhase } from './paired-floor.js';
import type { LatencyResult } from './webhook-load.js';

export interface RunInfo {
  startedAt: string;
  finishedAt?: string;
  command: string;
  machine: {
    cores: number;
    cpuModel: string;
    memoryGB: number;
    node: string;
    platform: string;
    loadAverageAtStart: number[];
    /** Linux's scheduler autogroup (one CPU share per session): while on, `nice` does not yield the cores across sessions. */
    schedulerAutogroup?: boolean;
  };
  versions: { kubernetes?: string; binaries?: string };
  options: Record<string, unknown>;
}

export interface RunReport {
  run: RunInfo;
  results: ScenarioResult[];
  /** The HRQ phase (absent with --hrq-size 0). */
  hrq?: HrqResult;
  errors: Array<{ topology: string; error: string; partial?: unknown }>;
}

const f = (x: number | undefined, digits = 2) => (x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(digits));
const ms = (x: number | undefined) =>
  x === undefined || !Number.isFinite(x) ? '–' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
/** Cores busy on average during a load: API server / etcd / HNC (both threads) / load generator / others; the machine. */
function cores(l: EventLoops): string {
  const c = l.coresBusy;
  if (!c) return '–';
  const stolen = stolenMs(c);
  return `${f(c['kube-apiserver'])} / ${f(c.etcd)} / ${f(c.hnc)} / ${f(c.generator)} / ${f(c.others)}; ${f(c.machine)}${stolen ? ` (${stolen})` : ''}`;
}

/** Each pooled copy's own p99, in the report's precision. */
const eachP99 = (p99s: number[] | undefined) => (p99s ?? []).map(ms).join(', ');

/**
 * A warning where the load generator itself sent late (p99 over 1 ms): the figure then measures the
 * instrument as much as the server (its event loop was held up; "from the actual send" leaves that out).
 */
function generatorLate(d: LatencyResult): string {
  return d.sendLateness.p99 > 1 ? ` ⚠ the load generator sent late, p99 ${ms(d.sendLateness.p99)} ms` : '';
}

/** What the hypervisor took from the virtual CPUs during a load: ms in all, and per core where it took any. */
function stolenMs(c: Record<string, number> | undefined): string {
  if (c?.stolenMs === undefined) return '';
  const cpus = Object.entries(c)
    .filter(([k, v]) => k.startsWith('stolenMs:') && v > 0)
    .map(([k, v]) => `${k.slice('stolenMs:'.length)} ${v}`);
  return `stolen ${c.stolenMs} ms${cpus.length ? `: ${cpus.join(', ')}` : ''}`;
}

/** How long the admission thread and the load generator waited for a CPU, per second, and the thread's CPU per review. */
function scheduling(l: EventLoops, reviews: number): string {
  const a = l.admissionEventLoop;
  const thread = a?.runQueueMs !== undefined && a.wallMs > 0 ? ms(a.runQueueMs / (a.wallMs / 1000)) : '–';
  const cpu = a?.cpuMs !== undefined && reviews > 0 ? f(a.cpuMs / reviews, 3) : '–';
  return `${thread}; ${ms(l.clientRunQueueMsPerS)}. ${cpu}`;
}
const pass = (ok: boolean | undefined) => (ok === undefined ? '' : ok ? ' ✅' : ' ❌');

export function markdown(report: RunReport): string {
  const { run, results } = report;
  const lines: string[] = [];
  lines.push(`# hnc-ts benchmark, ${run.startedAt.slice(0, 19).replace('T', ' ')} UTC`);
  lines.push('');
  lines.push(
    `\`${run.command}\` — ${run.machine.cores} cores (${run.machine.cpuModel}), ${run.machine.memoryGB} GB, Node ${run.machine.node}, Kubernetes ${run.versions.kubernetes ?? '?'} (${run.versions.binaries ?? '?'}).`,
  );
  lines.push(
    `Options: ${Object.entries(run.options)
      .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('/') : String(v)}`)
      .join(', ')}.`,
  );
  if (typeof run.options.cpuGroups === 'string')
    lines.push(
      `**CPU groups:** ${run.options.cpuGroups.startsWith('flat') ? run.options.cpuGroups : `isolated (--cgroups), ${run.options.cpuGroups}`}.`,
    );
  if (results.some((r) => r.sharedPlane))
    lines.push('The topologies shared one control plane (--quick): each cold start found the earlier topologies in place.');
  const contended = results.filter((r) => r.otherApiServers > 0 || (r.coldStart.cpu.others ?? 0) > 0.2 * r.coldStart.seconds);
  if (contended.length)
    lines.push(
      `**Contended machine:** other processes used the cores during ${contended.map((r) => `${r.topology} (${f(r.coldStart.cpu.others, 1)} CPU s during the cold start${r.otherApiServers ? `, ${r.otherApiServers} other kube-apiserver` : ''})`).join(', ')}; load average at start ${run.machine.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')}${run.machine.schedulerAutogroup ? "; the scheduler's autogroup was on, so niced work in other sessions still took an equal share of the cores" : ''}.`,
    );
  const left = results.flatMap((r) => r.leftoverProcesses);
  lines.push(
    left.length
      ? `**Processes left running after the control plane stopped: ${left.join(', ')}**`
      : 'Every control plane was stopped; no etcd, kube-apiserver or kube-controller-manager process was left running.',
  );
  lines.push('');
  if (!results.length && !report.hrq) {
    lines.push('No topology finished.');
  } else if (!results.length) {
    lines.push('No topology was run.');
  } else {
    const col = (fn: (r: ScenarioResult) => string) => results.map(fn);
    const rows: Array<[string, string, string[]]> = [];
    const row = (figure: string, target: string, fn: (r: ScenarioResult) => string) => rows.push([figure, target, col(fn)]);
    row('namespaces (depth, max fan-out)', '', (r) => `${r.shape.namespaces} (${r.shape.depth}, ${r.shape.maxFanOut})`);
    row('sources (root + inner)', '', (r) => `${r.shape.sources.root} + ${r.shape.sources.inner}`);
    row('floor: API server writes/s (at concurrency)', '', (r) => `${f(r.floor.writesPerSecond, 0)} (${r.floor.concurrency})`);
    row('cold start: minimum writes', '', (r) => String(r.coldStart.writes.minimum.total));
    row('cold start: seconds (floor seconds)', '', (r) => `${f(r.coldStart.seconds)} (${f(r.coldStart.floorSeconds)})`);
    row('cold start ÷ floor', '≤ 1.5', (r) => `${f(r.coldStart.ratioToFloor)}${pass(r.coldStart.ratioToFloor <= 1.5)}`);
    // HNCConfiguration's status (its first status, then the propagated counts) is not part of the
    // topology's minimum: shown apart, so that the ratio is about the topology's writes.
    row('cold start: writes made ÷ minimum (+ HNCConfiguration status)', '1.00', (r) => {
      const w = r.coldStart.writes;
      const config = w.apiserver.byResource.hncconfigurations ?? 0;
      const made = w.apiserver.total - config;
      return `${made} ÷ ${w.minimum.total} = ${f(made / w.minimum.total, 3)} (+ ${config})${pass(made === w.minimum.total)}`;
    });
    row('cold start: all copies and labels verified by listing', 'yes', (r) =>
      r.coldStart.verified.ok ? 'yes ✅' : `no ❌ ${JSON.stringify(r.coldStart.verified)}`,
    );
    row(
      'warm restart: writes at the API server / by the manager / objects changed',
      '0',
      (r) =>
        `${r.warmRestart.writes.total} / ${r.warmRestart.managerWrites} / ${r.warmRestart.objectsChanged.changed + r.warmRestart.objectsChanged.created + r.warmRestart.objectsChanged.deleted}${pass(r.warmRestart.writes.total === 0 && r.warmRestart.managerWrites === 0)}`,
    );
    row('warm restart: seconds to idle', '', (r) => f(r.warmRestart.seconds));
    row('propagation of 1 object: descendants', '', (r) => (r.propagation ? String(r.propagation.descendants) : '–'));
    row(
      'propagation p50 / p99 ms (floor ms)',
      '',
      (r) =>
        `${ms(r.propagation?.create.p50)} / ${ms(r.propagation?.create.p99)} (${ms(r.propagation && r.propagation.floorSeconds * 1000)})`,
    );
    row(
      'propagation p99 ÷ floor',
      '≤ 2 at 1,000 descendants',
      (r) =>
        `${f(r.propagation?.p99RatioToFloor)}${r.propagation && r.propagation.descendants >= 900 ? pass(r.propagation.p99RatioToFloor <= 2) : ''}`,
    );
    row('update of that object p50 / p99 ms', '', (r) => `${ms(r.propagation?.update?.p50)} / ${ms(r.propagation?.update?.p99)}`);
    row('deletion of that object p50 / p99 ms', '', (r) => `${ms(r.propagation?.delete.p50)} / ${ms(r.propagation?.delete.p99)}`);
    // Each trial between two floors of its own (bench/paired-floor.ts): the ratios of issue 18, item 1.
    const pf = (r: ScenarioResult) => r.propagation?.pairedFloors;
    row('propagation ÷ its own floors: every copy, median (worst) of the trials', '≤ 1.1', (r) => {
      const p = pf(r);
      return p ? `${f(p.create.ratio.median)} (${f(p.create.ratio.p99)})${pass(p.create.ratio.median <= 1.1)}` : '–';
    });
    row("… per namespace p50 / p99 ÷ the floors', median (worst p99)", 'p99 ≤ 1.3', (r) => {
      const p = pf(r);
      return p
        ? `${f(p.create.p50Ratio.median)} / ${f(p.create.p99Ratio.median)} (${f(p.create.p99Ratio.p99)})${pass(p.create.p99Ratio.median <= 1.3)}`
        : '–';
    });
    for (const phase of ['update', 'delete'] as const)
      row(
        `${phase === 'update' ? 'update of the source' : 'deletion'} ÷ its own floors: every copy, median (worst); per namespace p99 median`,
        '≤ 1.1; ≤ 1.3',
        (r) => {
          const p = pf(r)?.[phase];
          return p
            ? `${f(p.ratio.median)} (${f(p.ratio.p99)}); ${f(p.p99Ratio.median)}${pass(p.ratio.median <= 1.1 && p.p99Ratio.median <= 1.3)}`
            : '–';
        },
      );
    row('order: every copy ÷ the floor before / ÷ the floor after, median (create, update, delete)', '', (r) => {
      const p = pf(r);
      return p
        ? (['create', 'update', 'delete'] as const).map((k) => `${f(p[k].ratioBefore.median)} / ${f(p[k].ratioAfter.median)}`).join('; ')
        : '–';
    });
    row('the floors beside the trials: writes (at the API server) / HNC writes meanwhile / objects left', '0 left', (r) => {
      const p = pf(r);
      return p
        ? `${p.floorWrites} (${p.floorWritesAtApiserver}) / ${p.hncWritesDuringFloors.apiserver} / ${p.floorObjectsLeft}${pass(p.floorObjectsLeft === 0 && p.floorWritesAtApiserver === p.floorWrites)}`
        : '–';
    });
    row('CPU ms per write: trials HNC / apiserver / etcd; floors apiserver / etcd / HNC', '', (r) => {
      const p = r.propagation;
      if (!p) return '–';
      const n = p.writes.apiserver.total || NaN;
      const per = (c: Record<string, number>, k: string, writes: number) => f((1000 * (c[k] ?? NaN)) / writes, 2);
      const fw = p.pairedFloors.floorWrites;
      return `${per(p.cpu, 'hnc', n)} / ${per(p.cpu, 'kube-apiserver', n)} / ${per(p.cpu, 'etcd', n)}; ${per(p.pairedFloors.cpu, 'kube-apiserver', fw)} / ${per(p.pairedFloors.cpu, 'etcd', fw)} / ${per(p.pairedFloors.cpu, 'hnc', fw)}`;
    });
    row("other processes' CPU s during the trials / the floors", '', (r) =>
      r.propagation ? `${f(r.propagation.cpu.others, 1)} / ${f(r.propagation.pairedFloors.cpu.others, 1)}` : '–',
    );
    row('propagation: writes made ÷ minimum (+ HNCConfiguration status)', '1.00', (r) => {
      if (!r.propagation) return '–';
      const w = r.propagation.writes;
      const config = w.apiserver.byResource.hncconfigurations ?? 0;
      const made = w.apiserver.total - config;
      return `${made} ÷ ${w.minimum.total} = ${f(made / w.minimum.total, 3)} (+ ${config})${pass(made === w.minimum.total)}`;
    });
    row(
      'propagation with webhooks on p50 / p99 ms',
      '',
      (r) => `${ms(r.propagation?.withWebhooks?.create.p50)} / ${ms(r.propagation?.withWebhooks?.create.p99)}`,
    );
    row('subtree move: namespaces, p50 / max ms', '', (r) =>
      r.move ? `${r.move.size}: ${ms(r.move.trials.p50)} / ${ms(r.move.trials.max)}` : '–',
    );
    row('subtree move: writes made ÷ minimum', '1.00', (r) =>
      r.move ? `${r.move.writes.apiserver.total} ÷ ${r.move.writes.minimum.total} = ${f(r.move.writes.ratio, 3)}` : '–',
    );
    const rates = [...new Set(results.flatMap((r) => r.webhooks?.direct.map((d) => d.offered) ?? []))].sort((a, b) => a - b);
    const at = (r: ScenarioResult, rate: number) => r.webhooks?.direct.find((d) => d.offered === rate);
    for (const rate of rates) {
      row(`webhook p50 / p99 ms at ${rate} reviews/s (direct, open loop)`, 'p99 < 5', (r) => {
        const d = at(r, rate);
        return d ? `${ms(d.overall.p50)} / ${ms(d.overall.p99)}${pass(d.overall.p99 < 5)}${generatorLate(d)}` : '–';
      });
      row(`… HNC's own histogram at ${rate}/s: share answered within 5 ms (p99 bucket edge)`, '≥ 99 %', (r) => {
        const h = at(r, rate)?.serverSide;
        return h ? `${f(100 * h.within5ms, 1)} % (≤ ${ms(h.p99UpperMs)} ms)${pass(h.within5ms >= 0.99)}` : '–';
      });
      row(`… without / only the SubjectAccessReview request: p50 / p99 ms`, 'p99 < 5', (r) => {
        const d = at(r, rate);
        if (!d) return '–';
        const { with: sar, without } = d.bySubjectAccessReview;
        return `${ms(without.p50)} / ${ms(without.p99)}${pass(without.p99 < 5)}; ${ms(sar.p50)} / ${ms(sar.p99)}`;
      });
      row(`… load generator at ${rate}/s: sent late p99 / max ms; its event-loop delay max ms; CPU % of a core`, '', (r) => {
        const d = at(r, rate);
        return d
          ? `${ms(d.sendLateness.p99)} / ${ms(d.sendLateness.max)}; ${ms(d.clientEventLoop.max)}; ${f(d.clientCpuPercent, 0)}${d.clientPolicy && d.clientPolicy !== 'normal' ? ` (${d.clientPolicy})` : ''}`
          : '–';
      });
      row(`… event-loop delay p99 / max ms at ${rate}/s: admission thread; HNC's main thread (longest GC ms)`, '', (r) => {
        const d = at(r, rate);
        if (!d) return '–';
        const a = d.admissionEventLoop;
        const main = `${ms(d.serverEventLoop.p99)} / ${ms(d.serverEventLoop.max)} (${ms(d.serverEventLoop.gcMaxMs)})`;
        return `${a ? `${ms(a.p99)} / ${ms(a.max)} (${ms(a.gcMaxMs)})` : 'none (webhooks on the main thread)'}; ${main}`;
      });
      row(
        `… at ${rate}/s, waiting for a core (run queue), ms per s: admission thread; load generator. Admission thread CPU ms per review`,
        '',
        (r) => {
          const d = at(r, rate);
          return d ? scheduling(d, d.requests) : '–';
        },
      );
      row(
        `… at ${rate}/s, cores busy: API server / etcd / HNC / load generator / other processes; the whole machine (ms stolen by the hypervisor)`,
        '',
        (r) => {
          const d = at(r, rate);
          return d ? cores(d) : '–';
        },
      );
    }
    const wh = (fn: (w: NonNullable<ScenarioResult['webhooks']>) => string) => (r: ScenarioResult) => (r.webhooks ? fn(r.webhooks) : '–');
    row(
      'webhook p50 / p99 / max ms while one Role is copied to every namespace (most in flight; propagation ÷ floor)',
      'p99 < 3',
      wh((w) => {
        const d = w.duringPropagation;
        if (!d) return '–';
        const o = d.during.overall;
        const each = (d.trialP99s?.length ?? 0) > 1 ? `; ${d.trialP99s!.length} copies pooled, p99 each ${eachP99(d.trialP99s)}` : '';
        return `${ms(o.p50)} / ${ms(o.p99)} / ${ms(o.max)} (${d.during.maxInFlight}; ${f(d.propagationMs / d.floorMs, 2)}${each})${pass(o.p99 < 3)}${generatorLate(d.during)}`;
      }),
    );
    row(
      '… during the propagation: without / only the SubjectAccessReview request, p50 / p99 ms',
      'p99 < 3',
      wh((w) => {
        const d = w.duringPropagation;
        if (!d) return '–';
        const { with: sar, without } = d.during.bySubjectAccessReview;
        return `${ms(without.p50)} / ${ms(without.p99)}${pass(without.p99 < 3)}; ${ms(sar.p50)} / ${ms(sar.p99)}`;
      }),
    );
    row(
      '… during the propagation: p50 / p99 ms from the actual send (the generator’s own lateness left out)',
      '',
      wh((w) =>
        w.duringPropagation ? `${ms(w.duringPropagation.during.fromSend.p50)} / ${ms(w.duringPropagation.during.fromSend.p99)}` : '–',
      ),
    );
    row(
      '… during the propagation: load generator sent late p99 / max ms; event-loop delay max ms: admission thread (longest GC) / HNC main / generator',
      '',
      wh((w) => {
        const d = w.duringPropagation;
        if (!d) return '–';
        const a = d.all.admissionEventLoop;
        const policy = d.all.clientPolicy && d.all.clientPolicy !== 'normal' ? ` (generator at ${d.all.clientPolicy})` : '';
        return `${ms(d.during.sendLateness.p99)} / ${ms(d.during.sendLateness.max)}; ${a ? `${ms(a.max)} (${ms(a.gcMaxMs)})` : '–'} / ${ms(d.all.serverEventLoop.max)} / ${ms(d.all.clientEventLoop.max)}${policy}`;
      }),
    );
    row(
      '… during the load with the propagation, waiting for a core (run queue), ms per s: admission thread; load generator. Admission thread CPU ms per review',
      '',
      wh((w) => (w.duringPropagation ? scheduling(w.duringPropagation.all, w.duringPropagation.all.requests) : '–')),
    );
    row(
      '… during the load with the propagation, cores busy: API server / etcd / HNC / load generator / other processes; the whole machine (ms stolen by the hypervisor)',
      '',
      wh((w) => (w.duringPropagation ? cores(w.duringPropagation.all) : '–')),
    );
    row(
      'review floor (a bare TLS server with a fixed answer, in HNC’s CPU group), p50 / p99 / max ms: at rest; while another Role is copied',
      '',
      wh((w) => {
        const rf = w.reviewFloor;
        if (!rf) return '–';
        const o = rf.atRest.overall;
        const d = rf.duringCopy?.during.overall;
        const trials = rf.duringCopy?.trialP99s ?? [];
        const each = trials.length > 1 ? `; during the copies, p99 each ${eachP99(trials)}` : '';
        const stolen = `at rest ${stolenMs(rf.atRest.coresBusy) || '–'}; copy ${stolenMs(rf.duringCopy?.all.coresBusy) || '–'}${each}`;
        return `${ms(o.p50)} / ${ms(o.p99)} / ${ms(o.max)}; ${d ? `${ms(d.p50)} / ${ms(d.p99)} / ${ms(d.max)}` : '–'} (${stolen})`;
      }),
    );
    row(
      '… HNC’s webhook p99 ÷ the floor’s p99: at rest; during the copy',
      '',
      wh((w) => {
        const rf = w.reviewFloor;
        const top = w.direct.reduce<(typeof w.direct)[number] | undefined>((m, d) => (!m || d.offered > m.offered ? d : m), undefined);
        if (!rf || !top) return '–';
        const rest = f(top.overall.p99 / rf.atRest.overall.p99, 2);
        const during =
          w.duringPropagation && rf.duringCopy ? f(w.duringPropagation.during.overall.p99 / rf.duringCopy.during.overall.p99, 2) : '–';
        return `${rest}; ${during}`;
      }),
    );
    row(
      'webhook saturation: reviews/s (p50 ms) at fixed concurrency',
      '',
      wh((w) => `${f(w.saturation.perSecond, 0)} (${ms(w.saturation.overall.p50)}) at ${w.saturation.offered}`),
    );
    row(
      'dry-run requests through the API server p50 / p99 ms (rate)',
      '',
      wh((w) => `${ms(w.apiserver.overall.p50)} / ${ms(w.apiserver.overall.p99)} (${w.apiserver.offered}/s)`),
    );
    row("API server's view: webhook calls ≤ 5 ms", '≥ 99 %', (r) => {
      const all = Object.values(r.webhooks?.apiserverHistogram ?? {});
      const calls = all.reduce((a, h) => a + h.calls, 0);
      const within = all.reduce((a, h) => a + h.within5ms * h.calls, 0);
      return calls ? `${f((100 * within) / calls, 1)} % of ${calls}` : '–';
    });
    row(
      'restart with webhooks: write requests (objects changed)',
      '0',
      wh(
        (w) =>
          `${w.restartWrites.last.total} (${w.restartWrites.objectsChangedLast.changed + w.restartWrites.objectsChangedLast.created + w.restartWrites.objectsChangedLast.deleted})${w.restartWrites.restarts < 2 ? ' (first start)' : ''}`,
      ),
    );
    row(
      'manager RSS at steady state, MB (peak) — without webhooks',
      '< 300 at 5,000 ns',
      (r) =>
        `${f(r.steadyState.memory.rssMB, 0)} (${f(r.steadyState.memory.peakRssMB, 0)})${r.shape.namespaces >= 4500 ? pass(r.steadyState.memory.peakRssMB < 300) : ''}`,
    );
    row(
      'manager RSS with webhooks on (admission thread included), MB: right after the start / steady, 30 s later (the thread’s own heap used / reserved) / after the webhook loads (peak)',
      '≤ 90 at 300 ns, ≤ 120 at 1,000, ≤ 230 at 5,000',
      (r) => {
        if (!r.webhooks) return '–';
        const { idle, steady, afterLoads } = r.webhooks.memory;
        const s = steady ?? idle;
        const heap = s.admissionHeapTotalMB !== undefined ? ` (${f(s.admissionHeapUsedMB, 0)} / ${f(s.admissionHeapTotalMB, 0)})` : '';
        const n = r.shape.namespaces;
        const target = n <= 350 ? 90 : n <= 1100 ? 120 : n >= 4500 && n <= 5500 ? 230 : undefined;
        return `${f(idle.rssMB, 0)} / ${f(s.rssMB, 0)}${target !== undefined ? pass(s.rssMB <= target) : ''}${heap} / ${f(afterLoads.rssMB, 0)} (${f(afterLoads.peakRssMB, 0)})`;
      },
    );
    row(
      'manager live heap after a full GC, MB (RSS then)',
      '',
      (r) => `${f(r.steadyState.memory.heapLiveMB, 0)} (${f(r.steadyState.memory.rssAfterGcMB, 0)})`,
    );
    row(
      '… V8 heap reserved / memory outside the heap then, MB',
      '',
      (r) => `${f(r.steadyState.memory.heapTotalAfterGcMB, 0)} / ${f(r.steadyState.memory.externalAfterGcMB, 0)}`,
    );
    row(
      '… RSS then: anonymous / file-backed (node binary, shared), MB',
      '',
      (r) => `${f(r.steadyState.memory.rssAnonAfterGcMB, 0)} / ${f(r.steadyState.memory.rssFileAfterGcMB, 0)}`,
    );
    row(
      'manager RSS (peak) after restart, propagation trials and moves, MB',
      '',
      (r) => `${f(r.steadyState.memoryAfterWarmRestart.rssMB, 0)} (${f(r.steadyState.memoryAfterWarmRestart.peakRssMB, 0)})`,
    );
    row('… live heap after a full GC then, MB', '', (r) => f(r.steadyState.memoryAfterWarmRestart.heapLiveMB, 0));
    row('manager RSS before HNC started (node + code), MB', '', (r) => f(r.steadyState.memory.baselineRssMB, 0));
    row('manager CPU at steady state, % of a core', '', (r) => f(r.steadyState.cpuPercentAfterWarmRestart, 2));
    row(
      'HNC event-loop delay max ms: cold start / propagation trials (longest GC ms)',
      '',
      (r) =>
        `${ms(r.coldStart.eventLoop?.max)} / ${ms(r.propagation?.eventLoop?.max)} (${ms(Math.max(r.coldStart.eventLoop?.gcMaxMs ?? 0, r.propagation?.eventLoop?.gcMaxMs ?? 0))})`,
    );
    row(
      'manager CPU seconds: cold start / warm restart',
      '',
      (r) => `${f(r.coldStart.managerCpuSeconds)} / ${f(r.warmRestart.managerCpuSeconds)}`,
    );
    row(
      'cold start CPU s: apiserver / etcd / HNC / bench / other processes / stolen by the hypervisor (of cores × s)',
      '',
      (r) =>
        `${f(r.coldStart.cpu['kube-apiserver'], 1)} / ${f(r.coldStart.cpu.etcd, 1)} / ${f(r.coldStart.cpu.hnc, 1)} / ${f(r.coldStart.cpu.bench, 1)} / ${f(r.coldStart.cpu.others, 1)} / ${f(r.coldStart.cpu.steal, 1)} (of ${f(r.coldStart.seconds * report.run.machine.cores, 0)})`,
    );
    row(
      'floor: cores busy, apiserver / etcd / bench / other processes',
      '',
      (r) => `${f(r.floor.cpu['kube-apiserver'])} / ${f(r.floor.cpu.etcd)} / ${f(r.floor.cpu.bench)} / ${f(r.floor.cpu.others)}`,
    );
    lines.push(`| figure | target | ${results.map((r) => r.topology).join(' | ')} |`);
    lines.push(`|---|---|${results.map(() => '---').join('|')}|`);
    for (const [figure, target, cells] of rows) lines.push(`| ${figure} | ${target} | ${cells.join(' | ')} |`);
    lines.push('');
    const top = rates[rates.length - 1];
    lines.push(`Webhook latency by request (direct, open loop at ${top} reviews/s, ms):`);
    lines.push('');
    lines.push(`| request | ${results.map((r) => `${r.topology} p50 / p99`).join(' | ')} |`);
    lines.push(`|---|${results.map(() => '---').join('|')}|`);
    const byReq = (r: ScenarioResult) => (top === undefined ? undefined : at(r, top)?.byRequest) ?? {};
    const names = [...new Set(results.flatMap((r) => Object.keys(byReq(r))))];
    for (const n of names)
      lines.push(`| ${n} | ${results.map((r) => (byReq(r)[n] ? `${ms(byReq(r)[n]!.p50)} / ${ms(byReq(r)[n]!.p99)}` : '–')).join(' | ')} |`);
    lines.push('');
    const withPairs = results.filter((r) => r.propagation?.pairedFloors.trials.length);
    if (withPairs.length) {
      lines.push(
        'Each propagation trial between its two floors (ms for every copy; per-namespace p50 / p99; the floors before / after; ÷ their mean: all, p50, p99):',
      );
      lines.push('');
      lines.push(
        '| topology | trial | kind | create: HNC (floors) | ÷ floors | update: HNC (floors) | ÷ floors | delete: HNC (floors) | ÷ floors | CPU ms HNC (GC) / API server: floor before, trial, floor after |',
      );
      lines.push('|---|---|---|---|---|---|---|---|---|---|');
      for (const r of withPairs)
        r.propagation!.pairedFloors.trials.forEach((t, i) => {
          const cell = (p: PairedPhase) =>
            `${ms(p.hnc.allMs)}; ${ms(p.hnc.p50Ms)} / ${ms(p.hnc.p99Ms)} (${ms(p.hnc.allMs / p.ratioBefore)} / ${ms(p.hnc.allMs / p.ratioAfter)})`;
          const ratio = (p: PairedPhase) => `${f(p.ratio)}, ${f(p.p50Ratio)}, ${f(p.p99Ratio)}`;
          const c = t.cost;
          const cost = c
            ? [c.before, c.trial, c.after].map((x) => `${ms(x.hncCpuMs)} (${ms(x.hncGcMs)}) / ${ms(x.apiserverCpuMs)}`).join(', ')
            : '–';
          lines.push(
            `| ${r.topology} | ${i + 1} | ${t.kind} | ${cell(t.create)} | ${ratio(t.create)} | ${t.update ? cell(t.update) : '–'} | ${t.update ? ratio(t.update) : '–'} | ${cell(t.delete)} | ${ratio(t.delete)} | ${cost} |`,
          );
        });
      lines.push('');
    }
    if (results.some((r) => r.webhooks?.duringPropagation)) {
      const during = (r: ScenarioResult) => r.webhooks?.duringPropagation?.during.byRequest ?? {};
      lines.push(`Webhook latency by request while one Role is copied to every namespace (direct, open loop at ${top} reviews/s, ms):`);
      lines.push('');
      lines.push(`| request | ${results.map((r) => `${r.topology} p50 / p99 / max`).join(' | ')} |`);
      lines.push(`|---|${results.map(() => '---').join('|')}|`);
      for (const n of [...new Set(results.flatMap((r) => Object.keys(during(r))))])
        lines.push(
          `| ${n} | ${results.map((r) => (during(r)[n] ? `${ms(during(r)[n]!.p50)} / ${ms(during(r)[n]!.p99)} / ${ms(during(r)[n]!.max)}` : '–')).join(' | ')} |`,
        );
      lines.push('');
    }
    lines.push('Writes at the API server during the cold start, by resource:');
    lines.push('');
    for (const r of results)
      lines.push(
        `- ${r.topology}: ${Object.entries(r.coldStart.writes.apiserver.byRequest)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ')} (minimum: ${JSON.stringify(r.coldStart.writes.minimum)})`,
      );
  }
  if (report.hrq) lines.push('', ...hrqMarkdown(report.hrq));
  for (const e of report.errors)
    lines.push(e.partial ? `\n**${e.topology}: ${e.error.split('\n')[0]}**` : `\n**${e.topology} failed:** \`${e.error.split('\n')[0]}\``);
  lines.push('');
  return lines.join('\n');
}

/** The HRQ phase's table (bench/hrq.ts). */
export function hrqMarkdown(h: HrqResult): string[] {
  const lat = (r: HrqResult['webhook'][number] | undefined) => {
    if (!r) return '–';
    const denied = Object.values(r.byRequest).reduce((n, x) => n + x.denied, 0);
    const errors = Object.values(r.byRequest).reduce((n, x) => n + x.errors, 0);
    const server = r.serverSide ? `; HNC's own: mean ${ms(r.serverSide.meanMs)}, p99 ≤ ${ms(r.serverSide.p99UpperMs)}` : '';
    return `${ms(r.overall.p50)} / ${ms(r.overall.p99)} / ${ms(r.overall.max)} (${r.requests} reviews, ${denied} refused${errors ? `, ${errors} errors ❌` : ''}; ${r.newConnections ?? '?'} new connections${server})`;
  };
  const w = h.coldStart.writes;
  const warm = h.warmRestart;
  const changed = warm.objectsChanged.changed + warm.objectsChanged.created + warm.objectsChanged.deleted;
  const rows: Array<[string, string, string]> = [
    [
      'namespaces (depth, fan-out); HRQs (by depth)',
      '',
      `${h.shape.namespaces} (${h.shape.depth}, ${h.shape.fanOut}); ${h.shape.hrqs} (${Object.entries(h.shape.hrqsByDepth)
        .map(([d, n]) => `${d}: ${n}`)
        .join(', ')})`,
    ],
    ['floor: API server writes/s (at concurrency)', '', `${f(h.floor.writesPerSecond, 0)} (${h.floor.concurrency})`],
    [
      'cold start with HRQs: seconds until every singleton and HRQ status is right (floor s)',
      '',
      `${f(h.coldStart.seconds)} (${f(h.coldStart.floorSeconds)}; caches synced at ${f(h.coldStart.cachesSyncedSeconds)})`,
    ],
    ['cold start ÷ floor', '', f(h.coldStart.ratioToFloor)],
    [
      'HRQ writes: singletons + HRQ statuses ÷ minimum',
      '1.00',
      `(${w.singletons} + ${w.hrqStatus}) ÷ (${w.minimum.singletons} + ${w.minimum.hrqStatus}) = ${f(w.ratio, 3)}${pass(w.ratio === 1)}`,
    ],
    [
      "all of HNC's writes then (the quota system's status writes apart)",
      '',
      `${w.apiserver.total}: ${Object.entries(w.apiserver.byResource)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')} (quota system: ${w.quotaSystem})`,
    ],
    [
      'warm restart: writes at the API server / by the manager / objects changed',
      '0',
      `${warm.writes.total} / ${warm.managerWrites} / ${changed}${pass(warm.writes.total === 0 && warm.managerWrites === 0 && changed === 0)}`,
    ],
    ['warm restart: seconds to idle', '', f(warm.seconds)],
  ];
  for (const r of h.webhook) rows.push([`quota webhook p50 / p99 / max ms at ${r.offered}/s (one replica, direct)`, '', lat(r)]);
  for (const r of h.forwarding?.leader ?? []) rows.push([`… two replicas, sent to the leader, at ${r.offered}/s`, '', lat(r)]);
  for (const r of h.forwarding?.follower ?? []) {
    const l = h.forwarding!.leader.find((x) => x.offered === r.offered);
    rows.push([
      `… sent to the follower (forwarded), at ${r.offered}/s; p50 / p99 cost of forwarding`,
      '',
      `${lat(r)}; +${ms(r.overall.p50 - (l?.overall.p50 ?? NaN))} / +${ms(r.overall.p99 - (l?.overall.p99 ?? NaN))}`,
    ]);
  }
  if (h.forwarding)
    rows.push(['second replica start: writes', '0', `${h.forwarding.secondReplicaWrites}${pass(h.forwarding.secondReplicaWrites === 0)}`]);
  return [
    '## Hierarchical quotas',
    '',
    '| figure | target | hrq |',
    '|---|---|---|',
    ...rows.map(([a, b, c]) => `| ${a} | ${b} | ${c} |`),
    '',
  ];
}
