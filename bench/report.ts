// The run's report: JSON (everything measured) and markdown (the figures against their targets).
import type { HrqResult } from './hrq-phase.js';
import { hrqMarkdown } from './report-hrq.js';
import { topologySections } from './report-topologies.js';
import { webhookSections } from './report-webhooks.js';
import type { ScenarioResult } from './results.js';

export interface RunInfo {
  startedAt: string;
  finishedAt?: string;
  command: string;
  machine: { cores: number; cpuModel: string; memoryGB: number; node: string; platform: string; loadAverageAtStart: number[] };
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

function header(report: RunReport): string[] {
  const { run, results } = report;
  const m = run.machine;
  const left = results.flatMap((r) => r.leftoverProcesses);
  const options = Object.entries(run.options).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('/') : String(v)}`);
  return [
    `# hnc-ts benchmark, ${run.startedAt.slice(0, 19).replace('T', ' ')} UTC`,
    '',
    `\`${run.command}\` — ${m.cores} cores (${m.cpuModel}), ${m.memoryGB} GB, Node ${m.node}, Kubernetes ${run.versions.kubernetes ?? '?'} (${run.versions.binaries ?? '?'}); load average at the start ${m.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')}.`,
    `Options: ${options.join(', ')}.`,
    ...(results.some((r) => r.sharedPlane)
      ? ['The topologies shared one control plane (--quick): each cold start found the earlier topologies in place.']
      : []),
    left.length
      ? `**Processes left running after the control plane stopped: ${left.join(', ')}**`
      : 'Every control plane was stopped; no etcd, kube-apiserver or kube-controller-manager process was left running.',
    '',
  ];
}

export function markdown(report: RunReport): string {
  const { results } = report;
  const lines = header(report);
  if (!results.length) lines.push(report.hrq ? 'No topology was run.' : 'No topology finished.');
  else lines.push(...topologySections(results), '', ...webhookSections(results));
  if (report.hrq) lines.push('', ...hrqMarkdown(report.hrq));
  for (const e of report.errors)
    lines.push(e.partial ? `\n**${e.topology}: ${e.error.split('\n')[0]}**` : `\n**${e.topology} failed:** \`${e.error.split('\n')[0]}\``);
  lines.push('');
  return lines.join('\n');
}
