// `kubectl hns migrate --check` as text: the findings, actions first, each with the commands it
// needs, then the flags and Helm options that carry everything over, then the verdict.
import { exitCode, ExitCode, type Finding, type MigrationReport, type Severity } from '../../core/migration/index.js';

const ORDER: Record<Severity, number> = { action: 0, change: 1, ok: 2 };
const LABEL: Record<Severity, string> = { action: 'ACTION', change: 'CHANGE', ok: 'OK' };
const INDENT = ' '.repeat(22);

function findingLines(f: Finding): string[] {
  return [
    `${LABEL[f.severity].padEnd(8)}${f.area.padEnd(14)}${f.message}`,
    ...(f.commands ?? []).map((c) => `${INDENT}$ ${c}`),
    ...(f.args?.length ? [`${INDENT}manager args: ${f.args.join(' ')}`] : []),
    ...(f.helm ?? []).map((h) => `${INDENT}helm: ${h}`),
  ];
}

function carryOverLines(report: MigrationReport): string[] {
  const out: string[] = [];
  if (report.args.length)
    out.push(
      '',
      "Flags for hnc-ts's manager (add them to its container's args in deploy/manager/deployment.yaml before npm run build:install):",
      ...report.args.map((a) => `  ${a}`),
    );
  if (report.helm.length)
    out.push('', 'With Helm, every action above at once:', `  helm install hnc charts/hnc --namespace hnc-system ${report.helm.join(' ')}`);
  return out;
}

function verdict(report: MigrationReport): string {
  const actions = report.findings.filter((f) => f.severity === 'action').length;
  const code = exitCode(report);
  if (code === ExitCode.ActionNeeded)
    return `${actions} action${actions === 1 ? '' : 's'} needed before the swap (exit code ${code}). The swap's steps: docs/migrating-from-hnc.md`;
  if (code === ExitCode.Incomplete)
    return `Nothing found that needs doing first, but some reads were refused (exit code ${code}): run it as a cluster admin.`;
  return "Nothing needs doing before the swap. The swap's steps: docs/migrating-from-hnc.md";
}

export function renderMigrationCheck(report: MigrationReport): string {
  const sorted = [...report.findings].sort((a, b) => ORDER[a.severity] - ORDER[b.severity]);
  return `${[...sorted.flatMap(findingLines), ...carryOverLines(report), '', verdict(report)].join('\n')}\n`;
}
