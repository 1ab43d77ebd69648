import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { fillManifest, PLACEHOLDERS, tarGz } from './package.js';

const template = readFileSync(new URL('./hns.yaml', import.meta.url), 'utf8');
const values = {
  version: 'v0.1.0',
  homepage: 'https://github.com/example/hnc-ts',
  uri: 'https://github.com/example/hnc-ts/releases/download/v0.1.0/kubectl-hns-v0.1.0.tar.gz',
  sha256: 'a'.repeat(64),
};

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    version: string;
    homepage: string;
    shortDescription: string;
    caveats: string;
    platforms: {
      selector: { matchLabels: Record<string, string> };
      uri: string;
      sha256: string;
      files: { from: string; to: string }[];
      bin: string;
    }[];
  };
}

describe('the krew manifest template', () => {
  it('is a krew Plugin named hns, one platform per OS shipping the single-file bundle, with clear placeholders', () => {
    const m = parse(template) as Manifest;
    expect(m).toMatchObject({ apiVersion: 'krew.googlecontainertools.github.com/v1alpha2', kind: 'Plugin', metadata: { name: 'hns' } });
    expect(m.spec.shortDescription).not.toMatch(/[\r\n]/);
    expect(m.spec.caveats).toContain('Node.js 26.12 or later');
    expect(m.spec.platforms.map((p) => p.selector.matchLabels)).toEqual([{ os: 'linux' }, { os: 'darwin' }]);
    for (const p of m.spec.platforms) {
      expect(p).toMatchObject({
        uri: 'PLACEHOLDER_URI',
        sha256: 'PLACEHOLDER_SHA256',
        files: [{ from: 'kubectl-hns.mjs', to: '.' }],
        bin: 'kubectl-hns.mjs',
      });
    }
    expect([m.spec.version, m.spec.homepage]).toEqual(['PLACEHOLDER_VERSION', 'PLACEHOLDER_HOMEPAGE']);
    for (const p of PLACEHOLDERS) expect(template).toContain(p);
  });

  it('is filled by the release step, and refuses bad values', () => {
    const filled = fillManifest(template, values);
    const m = parse(filled) as Manifest;
    expect(m.spec.version).toBe('v0.1.0');
    expect(m.spec.homepage).toBe(values.homepage);
    for (const p of m.spec.platforms) expect([p.uri, p.sha256]).toEqual([values.uri, values.sha256]);
    expect(filled).not.toContain('PLACEHOLDER_');
    expect(filled.startsWith('# Krew plugin manifest of kubectl hns v0.1.0, made by kubectl-plugin/krew/release.ts.\napiVersion:')).toBe(
      true,
    );
    expect(() => fillManifest(template, { ...values, sha256: 'abc' })).toThrow('sha256 must be 64 lower-case hex digits');
    expect(() => fillManifest(template, { ...values, version: '0.1.0' })).toThrow('version must look like v1.2.3');
    expect(() => fillManifest(template, { ...values, uri: 'http://x' })).toThrow('expected an https URL');
    expect(() => fillManifest(`${template}  extra: PLACEHOLDER_OTHER\n`, values)).toThrow('the manifest still holds PLACEHOLDER_OTHER');
  });
});

describe('tarGz', () => {
  it('writes a ustar archive with the file, its mode and a valid checksum, the same bytes every time', () => {
    const content = Buffer.from('#!/usr/bin/env node\nconsole.log(1)\n');
    const archive = tarGz([{ name: 'kubectl-hns.mjs', mode: 0o755, content }]);
    expect(createHash('sha256').update(archive).digest('hex')).toBe(
      createHash('sha256')
        .update(tarGz([{ name: 'kubectl-hns.mjs', mode: 0o755, content }]))
        .digest('hex'),
    );
    const tar = gunzipSync(archive);
    expect(tar.length).toBe(512 * 4); // header, one data block, two end blocks
    const h = tar.subarray(0, 512);
    const field = (at: number, len: number) =>
      h
        .subarray(at, at + len)
        .toString('ascii')
        .replace(/[\0 ]+$/, '');
    expect(field(0, 100)).toBe('kubectl-hns.mjs');
    expect(parseInt(field(100, 8), 8)).toBe(0o755);
    expect(parseInt(field(124, 12), 8)).toBe(content.length);
    expect(field(257, 6)).toBe('ustar');
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!;
    expect(parseInt(field(148, 8), 8)).toBe(sum);
    expect(tar.subarray(512, 512 + content.length).equals(content)).toBe(true);
    expect(tar.subarray(1024).every((b) => b === 0)).toBe(true);
  });
});
