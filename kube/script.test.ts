import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lastLine, runScript, ScriptError } from './script.js';

const script = (body: string): string => {
  const path = join(mkdtempSync(join(tmpdir(), 'hnc-script-')), 's.sh');
  writeFileSync(path, body);
  return path;
};

describe('runScript', () => {
  it('answers the trimmed stdout and passes stderr on as it comes', async () => {
    const logged: string[] = [];
    const out = await runScript(script('echo building >&2\necho one\necho /the/dir\n'), [], (l) => logged.push(l));
    expect(out).toBe('one\n/the/dir');
    expect(lastLine(out)).toBe('/the/dir');
    expect(logged.join('')).toBe('building\n');
  });

  it('fails with the end of stderr, as the caller’s error', async () => {
    const path = script('echo "$1" >&2\nexit 3\n');
    await expect(runScript(path, ['no go here'], () => undefined)).rejects.toThrow(new ScriptError(`${path} failed (exit 3):\nno go here`));
    class Mine extends Error {}
    await expect(
      runScript(
        path,
        ['x'],
        () => undefined,
        (m) => new Mine(m),
      ),
    ).rejects.toBeInstanceOf(Mine);
  });
});
