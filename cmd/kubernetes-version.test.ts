import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { judgeVersion, REQUIRED_MINOR, SUPPORTED_MINORS } from './kubernetes-version.js';

describe('judgeVersion', () => {
  it('says nothing on every supported minor, suffixed or not', () => {
    for (let minor = SUPPORTED_MINORS.oldest; minor <= SUPPORTED_MINORS.newest; minor++) {
      expect(judgeVersion({ major: '1', minor: String(minor), gitVersion: `v1.${minor}.2` }).kind).toBe('supported');
      expect(judgeVersion({ major: '1', minor: `${minor}+`, gitVersion: `v1.${minor}.2-eks-1` }).kind).toBe('supported');
    }
  });

  it('warns in one line outside the tested range where nothing required is missing', () => {
    const newer = judgeVersion({ major: '1', minor: String(SUPPORTED_MINORS.newest + 1), gitVersion: 'v1.38.0' });
    expect(newer).toEqual({ kind: 'warn', message: expect.stringMatching(/^Kubernetes v1\.38\.0 is outside .* \(1\.34 to 1\.37\)/) });
    expect(judgeVersion({ major: '1', minor: String(REQUIRED_MINOR), gitVersion: 'v1.30.9' }).kind).toBe('warn');
    expect(judgeVersion({ major: '', minor: '', gitVersion: 'v0.0.0-master' }).kind).toBe('warn');
  });

  it('refuses where a required API is missing, saying which', () => {
    const old = judgeVersion({ major: '1', minor: String(REQUIRED_MINOR - 1), gitVersion: 'v1.29.4' });
    expect(old.kind).toBe('refuse');
    expect(old.kind === 'refuse' && old.message).toMatch(/v1\.29\.4 is too old: hnc-ts needs 1\.30 or newer \(webhook matchConditions/);
  });
});

describe('the tested range', () => {
  it('is what npm run test:matrix runs: one release of every supported minor, and the default build is the newest', () => {
    const root = join(import.meta.dirname, '..');
    const script = readFileSync(join(root, 'scripts', 'test-matrix.sh'), 'utf8');
    const versions = /^VERSIONS="([^"]+)"/m.exec(script)![1]!.split(' ');
    const minors = versions.map((v) => Number(/^v1\.(\d+)\.\d+$/.exec(v)![1]));
    const expected = Array.from({ length: SUPPORTED_MINORS.newest - SUPPORTED_MINORS.oldest + 1 }, (_, i) => SUPPORTED_MINORS.oldest + i);
    expect(minors).toEqual(expected);
    const build = readFileSync(join(root, 'local-cluster', 'build.sh'), 'utf8');
    expect(/HNC_K8S_VERSION:-(v[\d.]+)/.exec(build)![1]).toBe(versions.at(-1));
  });
});
