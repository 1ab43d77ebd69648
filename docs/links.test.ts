// Every citation of the project's docs in the tree resolves, so a maintainer with only the
// repository can follow each one (issue 12, item 3):
// * a section sign (U+00A7) followed by a number cites docs/behaviour.md and must name a numbered
//   heading there; outside docs/behaviour.md it must follow a mention of behaviour.md;
// * a repository path `docs/<name>.md`, optionally with `#anchor`, names an existing file, and the
//   anchor one of its headings (GitHub's slugs);
// * a relative Markdown link in a .md file names an existing file inside the repository, and its
//   anchor a heading of the target; a repository path written as inline code there exists;
// * nothing names a file outside the repository (a `shared` folder next to it, an absolute /work
//   path, an unpublished reference document).
// The checker is pure (checkText); the last test runs it over every text file of the tree.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BEHAVIOUR = 'docs/behaviour.md';
const SECTION = '\u00a7';

// ---- Markdown headings -----------------------------------------------------------------------------

/** The lines of a Markdown text outside fenced code blocks, with their 1-based numbers. */
function proseLines(md: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  let fence: string | undefined;
  md.split('\n').forEach((text, i) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(text);
    if (m) {
      if (fence === undefined) fence = m[1]![0];
      else if (m[1]![0] === fence) fence = undefined;
      return;
    }
    if (fence === undefined) out.push({ line: i + 1, text });
  });
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links keep their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M} _-]/gu, '').replace(/ /g, '-');
}

export interface MarkdownTargets {
  /** Heading anchors (with GitHub's -1, -2 suffixes for repeats) and explicit `<a id>`/`<a name>`. */
  readonly anchors: ReadonlySet<string>;
  /** Section numbers of numbered headings (`## 5. Propagation` → "5", `### 5.4 ...` → "5.4"). */
  readonly sections: ReadonlySet<string>;
}

export function markdownTargets(md: string): MarkdownTargets {
  const anchors = new Set<string>();
  const sections = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(md)) {
    for (const m of text.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!h) continue;
    const base = slug(h[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
    const num = /^(\d+(?:\.\d+)*)\.?\s/.exec(h[1]!);
    if (num) sections.add(num[1]!);
  }
  return { anchors, sections };
}

// ---- the checker -----------------------------------------------------------------------------------

/** What the checker may ask about the repository. Paths are relative to its root, with "/". */
export interface Repository {
  exists(path: string): boolean;
  /** The anchors and sections of a Markdown file, or undefined if it is not one. */
  targets(path: string): MarkdownTargets | undefined;
}

const NUM = String.raw`\d+(?:\.\d+)*`;
/** One cited section, optionally narrowed to numbered steps or checks of it. */
const ITEM = String.raw`${SECTION}${NUM}(?:\s+(?:steps?|checks?)\s+\d+(?:-\d+)?)?`;
/** A run of cited sections after a mention of behaviour.md (a path or a Markdown link to it). */
const CITATION = new RegExp(String.raw`behaviour\.md(?:#[\w-]*)?\)?\s+(${ITEM}(?:\s*(?:,|-|–|and|or)\s*${ITEM})*)`, 'g');
const SECTION_REF = new RegExp(`${SECTION}(${NUM})`, 'g');
/** `docs/<name>.md[#anchor]` as a repository path, not the tail of a longer path. */
const DOC_PATH = /(?<![\w./-])docs\/[\w.-]+\.md(?:#[\w-]+)?/g;
const MD_LINK = /\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
/** A code span holding only a relative path with a folder, e.g. `core/api/types.ts` or `deploy/rbac/`. */
const CODE_PATH = /`([\w-][\w.-]*\/[\w./-]*)`/g;
const MD_REF_DEF = /^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$/;
/** Things only present outside the repository (built from pieces so this file does not match). */
const OUTSIDE: ReadonlyArray<{ re: RegExp; what: string }> = [
  { re: new RegExp(String.raw`\.\./` + 'shared/'), what: 'a path outside the repository' },
  { re: new RegExp('/' + 'work/'), what: 'an absolute path of the machine the project was written on' },
  { re: new RegExp('hnc-' + 'reference'), what: 'a reference document that is not in the repository' },
  { re: new RegExp(String.raw`\breference\s+` + SECTION), what: 'a section of a reference document that is not in the repository' },
];

const lineOf = (text: string, index: number): number => text.slice(0, index).split('\n').length;

function checkAnchor(repo: Repository, file: string, anchor: string, where: string): string | undefined {
  const targets = repo.targets(file);
  if (targets && !targets.anchors.has(anchor)) return `${where}: no heading with anchor #${anchor} in ${file}`;
  return undefined;
}

/** The problems of one file's text (`path` relative to the repository root), as `path:line: what`. */
export function checkText(path: string, text: string, repo: Repository): string[] {
  const problems: string[] = [];
  const at = (index: number) => `${path}:${lineOf(text, index)}`;

  for (const { re, what } of OUTSIDE) {
    for (const m of text.matchAll(new RegExp(re.source, 'g'))) problems.push(`${at(m.index)}: names ${what} (${m[0]})`);
  }

  // Section citations.
  const behaviour = repo.targets(BEHAVIOUR);
  const covered = new Set<number>();
  if (path === BEHAVIOUR) {
    for (const m of text.matchAll(SECTION_REF)) covered.add(m.index);
  } else {
    for (const m of text.matchAll(CITATION)) {
      const start = m.index + m[0].length - m[1]!.length;
      for (const s of m[1]!.matchAll(SECTION_REF)) covered.add(start + s.index);
    }
  }
  for (const m of text.matchAll(SECTION_REF)) {
    if (!covered.has(m.index)) {
      problems.push(`${at(m.index)}: ${m[0]} does not say what it cites: write "${BEHAVIOUR} ${m[0]}"`);
    } else if (!behaviour) {
      problems.push(`${at(m.index)}: ${m[0]} cites ${BEHAVIOUR}, which does not exist`);
    } else if (!behaviour.sections.has(m[1]!)) {
      problems.push(`${at(m.index)}: ${BEHAVIOUR} has no section ${m[0]}`);
    }
  }

  // Repository paths of docs.
  for (const m of text.matchAll(DOC_PATH)) {
    const [file, anchor] = m[0].split('#') as [string, string | undefined];
    if (!repo.exists(file)) problems.push(`${at(m.index)}: ${file} does not exist`);
    else if (anchor !== undefined) {
      const p = checkAnchor(repo, file, anchor, at(m.index));
      if (p) problems.push(p);
    }
  }

  // Relative Markdown links, and repository paths written as inline code.
  if (path.endsWith('.md')) {
    for (const { line, text: prose } of proseLines(text)) {
      for (const m of prose.matchAll(CODE_PATH)) {
        const file = m[1]!.replace(/\/$/, '');
        const top = file.split('/')[0]!;
        if (!SKIP_DIRS.has(top) && repo.exists(top) && !repo.exists(file)) problems.push(`${path}:${line}: ${file} does not exist`);
      }
      const withoutCode = prose.replace(/`[^`]*`/g, (s) => ' '.repeat(s.length));
      const targets = [...withoutCode.matchAll(MD_LINK)].map((m) => m[1]!);
      const def = MD_REF_DEF.exec(withoutCode);
      if (def) targets.push(def[1]!);
      for (const target of targets) {
        const problem = checkLink(repo, path, target, `${path}:${line}`);
        if (problem) problems.push(problem);
      }
    }
  }
  return problems;
}

function checkLink(repo: Repository, from: string, target: string, where: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto:, ...
  const [rawPath, anchor] = target.split('#') as [string, string | undefined];
  const path = decodeURIComponent(rawPath);
  const file = path === '' ? from : posix.normalize(posix.join(posix.dirname(from), path));
  if (path.startsWith('/') || file === '..' || file.startsWith('../')) return `${where}: link ${target} leaves the repository`;
  const resolved = file.replace(/\/$/, '');
  if (!repo.exists(resolved)) return `${where}: link ${target}: ${resolved} does not exist`;
  if (anchor !== undefined && anchor !== '') return checkAnchor(repo, resolved, anchor, `${where}: link ${target}`);
  return undefined;
}

// ---- the repository on disk ------------------------------------------------------------------------

const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'coverage', '.cache']);
const TEXT_FILE = /\.(?:ts|mts|js|mjs|cjs|md|sh|ya?ml)$|^Dockerfile$/;

function textFiles(dir = ROOT): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) out.push(...textFiles(join(dir, entry.name)));
    } else if (entry.isFile() && TEXT_FILE.test(entry.name)) {
      out.push(relative(ROOT, join(dir, entry.name)).split('\\').join('/'));
    }
  }
  return out.sort();
}

function diskRepository(): Repository {
  const cache = new Map<string, MarkdownTargets | undefined>();
  return {
    exists: (path) => existsSync(join(ROOT, path)),
    targets(path) {
      if (!cache.has(path)) {
        const full = join(ROOT, path);
        const md = path.endsWith('.md') && existsSync(full) && statSync(full).isFile();
        cache.set(path, md ? markdownTargets(readFileSync(full, 'utf8')) : undefined);
      }
      return cache.get(path);
    },
  };
}

// ---- tests -------------------------------------------------------------------------------------------

/** An in-memory repository for the checker's own tests. */
function fakeRepository(files: Record<string, string>): Repository {
  return {
    exists: (path) => Object.keys(files).some((f) => f === path || f.startsWith(`${path}/`)),
    targets: (path) => (path.endsWith('.md') && files[path] !== undefined ? markdownTargets(files[path]) : undefined),
  };
}

const S = SECTION;
/** "docs/", built so that the example paths below are not citations of this file. */
const DOCS = ['docs', ''].join('/');
const SPEC = `# Spec\n\n## 1. API\n\n### 1.2 HierarchyConfiguration\n\n## 5. Propagation\n\n### 5.4 Selector annotations\n`;

describe('slug and markdownTargets', () => {
  it('derive GitHub anchors and section numbers from headings, not from code blocks', () => {
    const t = markdownTargets(
      `# Title\n## The watch layer (kube/watch)\n## \`create CHILD -n PARENT\`\n## Dup\n## Dup\n` +
        `\`\`\`\n## not a heading\n\`\`\`\n## 3. Forest\n### 3.10 Ten\n<a id="custom"></a>\n`,
    );
    expect([...t.anchors]).toEqual([
      'title',
      'the-watch-layer-kubewatch',
      'create-child--n-parent',
      'dup',
      'dup-1',
      '3-forest',
      '310-ten',
      'custom',
    ]);
    expect([...t.sections]).toEqual(['3', '3.10']);
  });
});

describe('checkText', () => {
  const other = '# Other\n## Part two\n';
  const repo = fakeRepository({
    [BEHAVIOUR]: SPEC,
    [`${DOCS}other.md`]: other,
    'guide/other.md': other,
    'guide/readme.md': '# Readme\n',
    'core/x.ts': '',
  });

  it('accepts citations of existing sections, paths, anchors and links', () => {
    const code = `// see ${BEHAVIOUR} ${S}5.4, ${S}1.2 and ${S}5 (${DOCS}other.md#part-two)\ndescribe('x (${BEHAVIOUR} ${S}1.2 check 3, ${S}5.4)')`;
    expect(checkText('core/x.ts', code, repo)).toEqual([]);
    const md = `See [the spec](../${BEHAVIOUR}#5-propagation) ${S}5.4, [other](./other.md#part-two), [code](../core/x.ts), [web](https://example.com/a.md).`;
    expect(checkText('guide/readme.md', md, repo)).toEqual([]);
    expect(checkText(BEHAVIOUR, `${SPEC}\nAs ${S}5.4 says.`, repo)).toEqual([]);
  });

  it('reports a section sign that does not say what it cites', () => {
    expect(checkText('core/x.ts', `// halted (${S}5.4)\n`, repo)).toEqual([
      `core/x.ts:1: ${S}5.4 does not say what it cites: write "${BEHAVIOUR} ${S}5.4"`,
    ]);
  });

  it('reports a section that the behaviour document does not have', () => {
    expect(checkText('core/x.ts', `\n// (${BEHAVIOUR} ${S}5.4-${S}5.9)`, repo)).toEqual([
      `core/x.ts:2: ${BEHAVIOUR} has no section ${S}5.9`,
    ]);
    expect(checkText(BEHAVIOUR, `${SPEC}\nSee ${S}7.`, repo)).toEqual([`${BEHAVIOUR}:11: ${BEHAVIOUR} has no section ${S}7`]);
  });

  it('reports missing files and anchors, in paths and in links', () => {
    expect(checkText('core/x.ts', `// ${DOCS}gone.md and ${DOCS}other.md#part-three`, repo)).toEqual([
      `core/x.ts:1: ${DOCS}gone.md does not exist`,
      `core/x.ts:1: no heading with anchor #part-three in ${DOCS}other.md`,
    ]);
    expect(checkText('guide/readme.md', '[a](missing.md) [b](other.md#nope) [c](#here)\n\n`[not](a-link.md)`', repo)).toEqual([
      'guide/readme.md:1: link missing.md: guide/missing.md does not exist',
      'guide/readme.md:1: link other.md#nope: no heading with anchor #nope in guide/other.md',
      'guide/readme.md:1: link #here: no heading with anchor #here in guide/readme.md',
    ]);
  });

  it('reports repository paths in inline code that do not exist', () => {
    expect(
      checkText('guide/readme.md', 'See `core/x.ts`, `core/gone.ts`, `guide/`, `elsewhere/a.ts` and `node_modules/a/b.js`.', repo),
    ).toEqual(['guide/readme.md:1: core/gone.ts does not exist']);
  });

  it('reports links and names that lead outside the repository', () => {
    expect(checkText('guide/readme.md', '[up](../../elsewhere.md)', repo)).toEqual([
      'guide/readme.md:1: link ../../elsewhere.md leaves the repository',
    ]);
    const outside = `// ../${'shared'}/notes.md, ${'reference'} ${S}4.2`;
    expect(checkText('core/x.ts', outside, repo)).toEqual([
      `core/x.ts:1: names a path outside the repository (../${'shared'}/)`,
      `core/x.ts:1: names a section of a reference document that is not in the repository (${'reference'} ${S})`,
      `core/x.ts:1: ${S}4.2 does not say what it cites: write "${BEHAVIOUR} ${S}4.2"`,
    ]);
  });
});

describe('the tree', () => {
  it('has only citations and links that resolve inside the repository', () => {
    const repo = diskRepository();
    const files = textFiles();
    expect(files).toContain(BEHAVIOUR);
    const problems = files.flatMap((f) => checkText(f, readFileSync(join(ROOT, f), 'utf8'), repo));
    expect(problems).toEqual([]);
  });
});
