// `kubectl hns config describe` as text, in HNC's layout.
import type { ConfigView } from '../model.js';

export function modeAction(mode: string | undefined): string {
  switch (mode) {
    case 'Propagate':
      return 'Propagating';
    case 'Remove':
      return 'Removing';
    case 'AllowPropagate':
      return 'AllowPropagate';
    default:
      return 'Ignoring';
  }
}

export function renderConfig(view: ConfigView): string {
  let out = 'Synchronized resources:\n';
  for (const r of view.resources) out += `* ${modeAction(r.mode)}: ${r.resource} (${r.group}/${r.version})\n`;
  out += '\nConditions:\n';
  for (const c of view.conditions) out += `${c.type} (${c.reason}): ${c.message}\n`;
  return out;
}
