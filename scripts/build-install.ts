// `npm run build:install [-- --image REF] [--variant default|hrq] [--out FILE]`: renders
// deploy/kustomization.yaml into one file, dist/install.yaml, and its HRQ variant
// deploy/hrq/kustomization.yaml into dist/install-hrq.yaml (HNC's hrq.yaml), for
// `kubectl apply --server-side -f`. It does what `kubectl kustomize` does for the few kustomization
// fields deploy/ uses (resources, images, and JSON 6902 `patches` with add/replace/remove) without
// needing kustomize, and refuses anything else, so the two never silently differ. Each manifest
// keeps its comments (the RBAC trade-offs are explained in them).
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isSeq, parseAllDocuments, parse, type Document } from 'yaml';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DEPLOY_KUSTOMIZATION = join(ROOT, 'deploy', 'kustomization.yaml');
export const INSTALL_YAML = join(ROOT, 'dist', 'install.yaml');
/** The HRQ variant: the same install with the manager's `--enable-hrq` (docs/hrq.md). */
export const DEPLOY_HRQ_KUSTOMIZATION = join(ROOT, 'deploy', 'hrq', 'kustomization.yaml');
export const INSTALL_HRQ_YAML = join(ROOT, 'dist', 'install-hrq.yaml');

/** The variants `npm run build:install` writes: kustomization and output file. */
export const VARIANTS = {
  default: { kustomization: DEPLOY_KUSTOMIZATION, out: INSTALL_YAML },
  hrq: { kustomization: DEPLOY_HRQ_KUSTOMIZATION, out: INSTALL_HRQ_YAML },
} as const;
export type Variant = keyof typeof VARIANTS;

/** The kustomization fields this renderer understands. */
const KNOWN_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'images', 'patches']);

interface ImageOverride {
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

/** A kustomize patch: only the inline JSON 6902 form, aimed at one object by kind and name. */
interface Patch {
  target?: { kind?: string; name?: string; namespace?: string; [other: string]: unknown };
  patch?: string;
  path?: string;
  [other: string]: unknown;
}

interface Kustomization {
  resources?: string[];
  images?: ImageOverride[];
  patches?: Patch[];
}

export interface RenderedObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [k: string]: unknown;
}

export interface Rendered {
  /** The objects, in apply order. */
  objects: RenderedObject[];
  /** The YAML stream, comments kept. */
  yaml: string;
}

/**
 * Apply order, as kustomize's legacy order: namespaces and CRDs before what lives in or uses them,
 * identities and RBAC before workloads, webhook configurations (if any) last.
 */
const KIND_ORDER = [
  'Namespace',
  'ResourceQuota',
  'StorageClass',
  'CustomResourceDefinition',
  'ServiceAccount',
  'Role',
  'ClusterRole',
  'RoleBinding',
  'ClusterRoleBinding',
  'ConfigMap',
  'Secret',
  'Endpoints',
  'Service',
  'LimitRange',
  'PriorityClass',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'Deployment',
  'StatefulSet',
  'CronJob',
  'PodDisruptionBudget',
];
const KIND_LAST = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'];

function rank(kind: string): number {
  const first = KIND_ORDER.indexOf(kind);
  if (first >= 0) return first;
  const last = KIND_LAST.indexOf(kind);
  return last >= 0 ? KIND_ORDER.length + 1 + last : KIND_ORDER.length;
}

function readKustomization(file: string): Kustomization {
  const k = parse(readFileSync(file, 'utf8')) as Record<string, unknown> | null;
  if (!k || typeof k !== 'object') throw new Error(`${file}: not a kustomization`);
  const unknown = Object.keys(k).filter((f) => !KNOWN_FIELDS.has(f));
  if (unknown.length) {
    throw new Error(
      `${file}: scripts/build-install.ts does not understand ${unknown.join(', ')}; use only resources and images, or teach it`,
    );
  }
  return k as Kustomization;
}

interface Loaded {
  doc: Document;
  object: RenderedObject;
  source: string;
}

/** The documents of a kustomization, its resources in order (directories through their kustomization.yaml). */
function load(kustomizationFile: string, seen = new Set<string>()): { docs: Loaded[]; images: ImageOverride[] } {
  if (seen.has(kustomizationFile)) throw new Error(`${kustomizationFile}: included twice (a cycle?)`);
  seen.add(kustomizationFile);
  const k = readKustomization(kustomizationFile);
  const base = dirname(kustomizationFile);
  const docs: Loaded[] = [];
  const images: ImageOverride[] = [];
  for (const entry of k.resources ?? []) {
    const path = resolve(base, entry);
    if (statSync(path).isDirectory()) {
      const inner = load(join(path, 'kustomization.yaml'), seen);
      docs.push(...inner.docs);
      images.push(...inner.images);
      continue;
    }
    for (const doc of parseAllDocuments(readFileSync(path, 'utf8'))) {
      if (doc.errors.length) throw new Error(`${path}: ${doc.errors[0]!.message}`);
      const object = doc.toJSON() as RenderedObject | null;
      if (!object) continue; // a document of comments only
      if (!object.apiVersion || !object.kind || !object.metadata?.name)
        throw new Error(`${path}: a document without apiVersion, kind or metadata.name`);
      docs.push({ doc, object, source: relative(ROOT, path) });
    }
  }
  for (const patch of k.patches ?? []) applyPatch(kustomizationFile, patch, docs);
  // An outer kustomization's images override an inner one's (kustomize applies them outermost last).
  images.push(...(k.images ?? []));
  return { docs, images };
}

interface PatchOp {
  op: string;
  path: string;
  value?: unknown;
}

/** A JSON pointer (RFC 6901) as yaml's path: numeric segments index sequences. */
function pointer(path: string): Array<string | number> {
  if (!path.startsWith('/')) throw new Error(`a patch path must start with /: ${path}`);
  return path
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^(0|[1-9]\d*)$/.test(s) ? Number(s) : s));
}

/** Applies one inline JSON 6902 patch (add, replace, remove) to the one object its target names. */
function applyPatch(file: string, patch: Patch, docs: Loaded[]): void {
  const where = `${file}: patch`;
  const extra = Object.keys(patch).filter((f) => f !== 'target' && f !== 'patch');
  const targetExtra = Object.keys(patch.target ?? {}).filter((f) => !['kind', 'name', 'namespace'].includes(f));
  if (extra.length || targetExtra.length || !patch.patch || !patch.target?.kind || !patch.target.name) {
    throw new Error(`${where}: only an inline JSON 6902 \`patch\` with a target kind and name is understood`);
  }
  const { kind, name, namespace } = patch.target;
  const matching = docs.filter(
    (d) =>
      d.object.kind === kind && d.object.metadata.name === name && (namespace === undefined || d.object.metadata.namespace === namespace),
  );
  if (matching.length !== 1) throw new Error(`${where}: ${matching.length} objects match ${kind} ${name}, not one`);
  const loaded = matching[0]!;
  const ops = parse(patch.patch) as PatchOp[] | null;
  if (!Array.isArray(ops)) throw new Error(`${where}: not a list of JSON 6902 operations`);
  for (const op of ops) {
    const at = pointer(op.path);
    const last = at[at.length - 1];
    if (op.op === 'add' && last === '-') {
      const list = loaded.doc.getIn(at.slice(0, -1), true);
      if (!isSeq(list)) throw new Error(`${where}: ${op.path}: not a list`);
      list.add(loaded.doc.createNode(op.value));
    } else if (op.op === 'add' && typeof last === 'number') {
      const list = loaded.doc.getIn(at.slice(0, -1), true);
      if (!isSeq(list) || last > list.items.length) throw new Error(`${where}: ${op.path}: no such list position`);
      list.items.splice(last, 0, loaded.doc.createNode(op.value));
    } else if (op.op === 'add' || op.op === 'replace' || op.op === 'remove') {
      if (op.op !== 'add' && !loaded.doc.hasIn(at)) throw new Error(`${where}: ${op.op} ${op.path}: nothing there`);
      if (op.op === 'remove') loaded.doc.deleteIn(at);
      else loaded.doc.setIn(at, loaded.doc.createNode(op.value));
    } else throw new Error(`${where}: operation ${JSON.stringify(op.op)} is not understood (add, replace, remove)`);
  }
  loaded.object = loaded.doc.toJSON() as RenderedObject;
}

/** Splits an image reference into name and the tag or digest part ("hnc-ts:0.1.0" → hnc-ts). */
function imageName(ref: string): string {
  const at = ref.indexOf('@');
  const noDigest = at >= 0 ? ref.slice(0, at) : ref;
  const colon = noDigest.lastIndexOf(':');
  return colon > noDigest.lastIndexOf('/') ? noDigest.slice(0, colon) : noDigest;
}

function applyImage(ref: string, o: ImageOverride): string {
  const name = o.newName ?? imageName(ref);
  if (o.digest) return `${name}@${o.digest}`;
  if (o.newTag) return `${name}:${o.newTag}`;
  return name + ref.slice(imageName(ref).length);
}

const POD_SPEC_PATHS: Record<string, string[]> = {
  Deployment: ['spec', 'template', 'spec'],
  StatefulSet: ['spec', 'template', 'spec'],
  DaemonSet: ['spec', 'template', 'spec'],
  Job: ['spec', 'template', 'spec'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
  Pod: ['spec'],
};

/**
 * Renders the kustomization. `image` replaces the whole reference of every container whose image
 * is named by the kustomization's `images` (for a registry of your own: --image ghcr.io/me/hnc-ts:v1).
 */
export function renderInstall(opts: { kustomization?: string; image?: string } = {}): Rendered {
  const file = opts.kustomization ?? DEPLOY_KUSTOMIZATION;
  const { docs, images } = load(file);
  for (const { doc, object } of docs) {
    const podPath = POD_SPEC_PATHS[object.kind];
    if (!podPath) continue;
    for (const list of ['initContainers', 'containers']) {
      const containers = (doc.getIn([...podPath, list]) as { items?: unknown[] } | undefined)?.items ?? [];
      containers.forEach((_, i) => {
        const at = [...podPath, list, i, 'image'];
        const ref = String(doc.getIn(at) ?? '');
        const matching = images.filter((o) => o.name === imageName(ref));
        if (!matching.length) return;
        const next = opts.image ?? matching.reduce((r, o) => applyImage(r, o), ref);
        doc.setIn(at, next);
      });
    }
  }
  const seen = new Set<string>();
  for (const { object, source } of docs) {
    const id = `${object.apiVersion}/${object.kind}/${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    if (seen.has(id)) throw new Error(`${source}: ${object.kind} ${object.metadata.name} is defined twice`);
    seen.add(id);
  }
  const key = (l: Loaded) => [l.object.metadata.namespace ?? '', l.object.metadata.name].join('/');
  const sorted = [...docs].sort(
    (a, b) => rank(a.object.kind) - rank(b.object.kind) || a.object.kind.localeCompare(b.object.kind) || key(a).localeCompare(key(b)),
  );
  const body = sorted
    .map(({ doc, source }) => {
      const text = doc
        .toString({ lineWidth: 0 })
        .replace(/^---\n/, '')
        .trimEnd();
      return `# Source: ${source}\n${text}\n`;
    })
    .join('---\n');
  return { objects: sorted.map((l) => l.doc.toJSON() as RenderedObject), yaml: body };
}

function header(variant: Variant, image: string | undefined): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  const { kustomization, out } = VARIANTS[variant];
  return [
    `# ${pkg.name} ${pkg.version}: everything it needs in a cluster, in one file${variant === 'hrq' ? ', with hierarchical resource quotas on' : ''}.`,
    `# Generated by \`npm run build:install\` from ${relative(ROOT, kustomization)}; do not edit.`,
    ...(image ? [`# Image: ${image}`] : []),
    `#   kubectl apply --server-side -f ${basename(out)}`,
    '# The manager writes its webhook configurations itself; see docs/deploy.md to uninstall.',
    '',
    '',
  ].join('\n');
}

/** Renders one variant and writes it (with its header) to `out`; returns what it wrote. */
export function writeInstall(opts: { variant?: Variant; image?: string; out?: string } = {}): {
  out: string;
  objects: number;
  image?: string;
} {
  const variant = opts.variant ?? 'default';
  const out = opts.out ?? VARIANTS[variant].out;
  const rendered = renderInstall({ kustomization: VARIANTS[variant].kustomization, image: opts.image });
  const deployment = rendered.objects.find((o) => o.kind === 'Deployment');
  const usedImage = (deployment?.spec as { template?: { spec?: { containers?: Array<{ image?: string }> } } } | undefined)?.template?.spec
    ?.containers?.[0]?.image;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, header(variant, usedImage) + rendered.yaml);
  return { out, objects: rendered.objects.length, image: usedImage };
}

function main(argv: string[]): void {
  let image: string | undefined = process.env.HNC_IMAGE || undefined;
  let out: string | undefined;
  let variant: Variant | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (!v) throw new Error(`${a.split('=')[0]} needs a value`);
      return v;
    };
    if (a === '--image' || a.startsWith('--image=')) image = value();
    else if (a === '--out' || a.startsWith('--out=')) out = resolve(value());
    else if (a === '--variant' || a.startsWith('--variant=')) {
      const v = value();
      if (!(v in VARIANTS)) throw new Error(`--variant must be one of ${Object.keys(VARIANTS).join(', ')}, not ${JSON.stringify(v)}`);
      variant = v as Variant;
    } else if (a === '-h' || a === '--help') {
      process.stdout.write(
        [
          'Usage: npm run build:install -- [--image REF] [--variant default|hrq] [--out FILE]',
          '  Writes dist/install.yaml (deploy/) and dist/install-hrq.yaml (deploy/hrq/: the manager with --enable-hrq).',
          '  --variant writes only that one; --out FILE writes one variant (default unless --variant) to FILE.',
          '  HNC_IMAGE sets --image.',
          '',
        ].join('\n'),
      );
      return;
    } else throw new Error(`unknown argument ${a}`);
  }
  // --out alone keeps its old meaning: the default install, to that file.
  const variants: Variant[] = variant ? [variant] : out ? ['default'] : (Object.keys(VARIANTS) as Variant[]);
  for (const v of variants) {
    const wrote = writeInstall({ variant: v, image, out });
    const shown = relative(process.cwd(), wrote.out).startsWith('..') ? wrote.out : relative(process.cwd(), wrote.out);
    process.stderr.write(`wrote ${shown}: ${wrote.objects} objects${wrote.image ? `, image ${wrote.image}` : ''}\n`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`build-install: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
