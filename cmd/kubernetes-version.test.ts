import { describe, expect, it } from 'vitest';
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
