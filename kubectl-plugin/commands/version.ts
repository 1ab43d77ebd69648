// `kubectl hns version`.
import { defineCommand } from '../cli/command.js';
import { versionText } from '../version.js';

export const versionCommand = defineCommand({
  name: 'version',
  summary: 'Show version of HNC plugin',
  args: { min: 0, max: 0, names: '' },
  run({ io }) {
    io.out(`${versionText()}\n`);
    return Promise.resolve();
  },
});
