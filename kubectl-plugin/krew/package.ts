// The pure half of the krew release step (release.ts does the I/O): filling the manifest
// template's placeholders, and packing files into a .tar.gz that krew can extract. The archive is
// written here (ustar, fixed owner and time) rather than by a `tar` command, so it is the same
// bytes on every machine and its sha256 can be checked by anyone who rebuilds it.
import { gzipSync } from 'node:zlib';

export const PLACEHOLDERS = ['PLACEHOLDER_VERSION', 'PLACEHOLDER_HOMEPAGE', 'PLACEHOLDER_URI', 'PLACEHOLDER_SHA256'] as const;

export interface ReleaseValues {
  /** `v0.1.0`: krew wants a semantic version with the leading v. */
  version: string;
  homepage: string;
  /** Where the archive can be downloaded. */
  uri: string;
  /** Lower-case hex sha256 of the archive. */
  sha256: string;
}

/** The manifest with every placeholder replaced; throws on a bad value or a placeholder left. */
export function fillManifest(template: string, values: ReleaseValues): string {
  if (!/^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(values.version)) throw new Error(`version must look like v1.2.3, got "${values.version}"`);
  if (!/^[a-f0-9]{64}$/.test(values.sha256)) throw new Error(`sha256 must be 64 lower-case hex digits, got "${values.sha256}"`);
  for (const url of [values.homepage, values.uri]) if (!/^https:\/\/\S+$/.test(url)) throw new Error(`expected an https URL, got "${url}"`);
  const filled = template
    .replaceAll('PLACEHOLDER_VERSION', values.version)
    .replaceAll('PLACEHOLDER_HOMEPAGE', values.homepage)
    .replaceAll('PLACEHOLDER_URI', values.uri)
    .replaceAll('PLACEHOLDER_SHA256', values.sha256);
  // Only the template's comment may still mention placeholders; no value may.
  const body = filled.replace(/^\s*#.*$/gm, '');
  const left = body.match(/PLACEHOLDER_[A-Z0-9_]+/);
  if (left) throw new Error(`the manifest still holds ${left[0]}`);
  // The header comment explains the template; the filled manifest gets a short one instead.
  return `# Krew plugin manifest of kubectl hns ${values.version}, made by kubectl-plugin/krew/release.ts.\n${filled.replace(/^(#.*\n)+/, '')}`;
}

export interface ArchiveFile {
  name: string;
  mode: number;
  content: Buffer;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(file: ArchiveFile, mtime: number): Buffer {
  if (Buffer.byteLength(file.name) > 100) throw new Error(`file name too long for the archive: ${file.name}`);
  const h = Buffer.alloc(BLOCK);
  h.write(file.name, 0, 100, 'utf8');
  h.write(octal(file.mode, 8), 100, 8, 'ascii');
  h.write(octal(0, 8), 108, 8, 'ascii'); // uid
  h.write(octal(0, 8), 116, 8, 'ascii'); // gid
  h.write(octal(file.content.length, 12), 124, 12, 'ascii');
  h.write(octal(mtime, 12), 136, 12, 'ascii');
  h.write('        ', 148, 8, 'ascii'); // checksum, counted as spaces
  h.write('0', 156, 1, 'ascii'); // regular file
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  h.write('root', 265, 32, 'ascii');
  h.write('root', 297, 32, 'ascii');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return h;
}

/** A gzip-compressed ustar archive of these files, byte for byte the same for the same input. */
export function tarGz(files: readonly ArchiveFile[], mtime = 0): Buffer {
  const parts: Buffer[] = [];
  for (const f of files) {
    parts.push(header(f, mtime), f.content);
    const pad = (BLOCK - (f.content.length % BLOCK)) % BLOCK;
    if (pad) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return gzipSync(Buffer.concat(parts), { level: 9 });
}
