// `npm run build:install [-- --image REF] [--out FILE]`: renders deploy/kustomization.yaml into one
// file, dist/install.yaml, for `kubectl apply --server-side -f`. It does what `kubectl kustomize
// deploy/` does for the few kustomization fields deploy/ uses (resources, images) without needing
// kustomize, and refuses any other field, so the two never silently differ. Each manifest keeps
// its comments (the RBAC trade-offs are explained in them).
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseAllDocuments, parse, type Document } from 'yaml';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DEPLOY_KUSTOMIZATION = join(ROOT, 'deploy', 'kustomization.yaml');
export const INSTALL_YAML = join(ROOT, 'dist', 'install.yaml');

/** The kustomization fields this renderer understands. */
const KNOWN_FIELDS = new Set(['apiVersion', 'kind', 'resources', 'images']);

interface ImageOverride {
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

interface Kustomization {
  resources?: string[];
  images?: ImageOverride[];
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
  // An outer kustomization's images override an inner one's (kustomize applies them outermost last).
  images.push(...(k.images ?? []));
  return { docs, images };
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

function header(image: string | undefined): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
  return [
    `# ${pkg.name} ${pkg.version}: everything it needs in a cluster, in one file.`,
    '# Generated by `npm run build:install` from deploy/kustomization.yaml; do not edit.',
    ...(image ? [`# Image: ${image}`] : []),
    '#   kubectl apply --server-side -f install.yaml',
    '# The manager writes its webhook configurations itself; see docs/deploy.md to uninstall.',
    '',
    '',
  ].join('\n');
}

function main(argv: string[]): void {
  let image: string | undefined = process.env.HNC_IMAGE || undefined;
  let out = INSTALL_YAML;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : argv[++i];
      if (!v) throw new Error(`${a.split('=')[0]} needs a value`);
      return v;
    };
    if (a === '--image' || a.startsWith('--image=')) image = value();
    else if (a === '--out' || a.startsWith('--out=')) out = resolve(value());
    else if (a === '-h' || a === '--help') {
      process.stdout.write(
        'Usage: npm run build:install -- [--image REF] [--out FILE]   (default dist/install.yaml; HNC_IMAGE sets --image)\n',
      );
      return;
    } else throw new Error(`unknown argument ${a}`);
  }
  const rendered = renderInstall({ image });
  const deployment = rendered.objects.find((o) => o.kind === 'Deployment');
  const usedImage = (deployment?.spec as { template?: { spec?: { containers?: Array<{ image?: string }> } } } | undefined)?.template?.spec
    ?.containers?.[0]?.image;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, header(usedImage) + rendered.yaml);
  process.stderr.write(
    `wrote ${relative(process.cwd(), out).startsWith('..') ? out : relative(process.cwd(), out)}: ${rendered.objects.length} objects${usedImage ? `, image ${usedImage}` : ''}\n`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`build-install: ${(err as Error).message}\n`);
    process.exit(1);
  }
}
