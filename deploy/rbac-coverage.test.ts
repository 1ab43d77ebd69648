// The shipped RBAC (deploy/rbac/*.yaml) grants the manager everything its code uses, and no more
// than it says. Two halves:
//  - NEEDS, a table a reviewer extends: each resource the manager touches, the verbs, where, and why;
//    every entry is checked against the RBAC as the API server would evaluate it for the manager's
//    service account (aggregation, ClusterRoleBindings, RoleBindings, resourceNames).
//  - A scan of the manager's source (the TypeScript AST of core/, kube/, controller/, webhooks/,
//    cmd/): every API path it builds (`/api/v1/...`, `/apis/<group>/<version>/...`) and every object
//    it writes by apiVersion and kind must be in NEEDS, with the verbs its call sites imply (a
//    Reflector lists and watches; client.get gets; create, replace, mergePatch, delete). So a new
//    watch or write without a grant fails here, not in a user's cluster.
// Kinds reached only through discovery (propagated types) cannot be scanned: they are the
// ENFORCED_TYPES plus the propagation entries of NEEDS.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import * as constants from '../core/api/constants.js';
import { ENFORCED_TYPES, GROUP } from '../core/api/constants.js';
import { readManifests, type Manifest } from '../kube/apply.js';
import { AGGREGATED_ROLES, MANAGER_RBAC, MANAGER_SERVICE_ACCOUNT } from '../kube/install.js';
import { Policy } from '../webhooks/policies.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PATHS_FILE = 'core/api/paths.ts';
const RBAC_DIR = dirname(MANAGER_RBAC);
const HNC_NAMESPACE = MANAGER_SERVICE_ACCOUNT.namespace;

// ---------------------------------------------------------------------------------------------
// What the manager needs. Extend this table with every new resource the manager touches.

interface Need {
  group: string;
  resource: string;
  /** Verbs needed on any object of the resource. */
  verbs: string[];
  /** Verbs needed only on these objects (get/update/patch/delete can be limited by name; create cannot). */
  named?: { names: string[]; verbs: string[] };
  /** 'cluster' (default): everywhere; 'hnc-namespace': only in HNC's own namespace, and must not be granted elsewhere. */
  scope?: 'cluster' | 'hnc-namespace';
  /** Cluster-scoped resources are checked without a namespace. */
  clusterScoped?: boolean;
  why: string;
}

const CRUD = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
/** What propagating a kind takes: watch sources and copies everywhere, create, replace and delete copies. */
const PROPAGATION = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
const WEBHOOK_CONFIGURATIONS = ['hnc-validating-webhook-configuration', 'hnc-mutating-webhook-configuration'];
const ADMISSION_POLICIES = Object.values(Policy);

const NEEDS: Need[] = [
  {
    group: '',
    resource: 'namespaces',
    verbs: CRUD,
    clusterScoped: true,
    why: 'the forest: watches every namespace, labels managed ones, creates and deletes subnamespaces',
  },
  {
    group: GROUP,
    resource: 'hierarchyconfigurations',
    verbs: CRUD,
    why: 'watched for the forest; created, updated (status, children) and deleted by the hierarchy reconciler',
  },
  { group: GROUP, resource: 'subnamespaceanchors', verbs: CRUD, why: 'watched; status and finalizers written by the anchor reconciler' },
  {
    group: GROUP,
    resource: 'hncconfigurations',
    verbs: CRUD,
    clusterScoped: true,
    why: 'the singleton `config`: watched, created when missing, status written',
  },
  {
    group: GROUP,
    resource: 'hierarchicalresourcequotas',
    verbs: CRUD,
    why: 'HRQ (--enable-hrq): watched by every replica (its webhooks judge usage), status written by the leader',
  },
  {
    group: 'apiextensions.k8s.io',
    resource: 'customresourcedefinitions',
    verbs: ['get', 'list', 'watch'],
    clusterScoped: true,
    why: 'uninstall safety (notices its CRDs being deleted) and the start-up CRD check',
  },
  { group: '', resource: 'events', verbs: ['create', 'patch'], why: 'Events on namespaces and objects when conditions appear' },
  {
    group: 'authorization.k8s.io',
    resource: 'subjectaccessreviews',
    verbs: ['create'],
    clusterScoped: true,
    why: 'webhooks ask whether the requesting user may change a subtree',
  },
  {
    group: 'authorization.k8s.io',
    resource: 'selfsubjectaccessreviews',
    verbs: ['create'],
    clusterScoped: true,
    why: 'the manager checks its own access to each kind it is asked to propagate, to report what is missing',
  },
  {
    group: 'authentication.k8s.io',
    resource: 'selfsubjectreviews',
    verbs: ['create'],
    clusterScoped: true,
    why: 'the manager learns the user it acts as, for its webhooks to know its own requests wherever it runs',
  },
  {
    group: 'admissionregistration.k8s.io',
    resource: 'validatingwebhookconfigurations',
    verbs: ['create'],
    named: { names: WEBHOOK_CONFIGURATIONS, verbs: ['get', 'list', 'watch', 'update', 'patch', 'delete'] },
    clusterScoped: true,
    why: 'the manager writes its own configuration (CA bundle, objects rules) by server-side apply, watches it by name to repair it, and removes it when a run outside the cluster stops',
  },
  {
    group: 'admissionregistration.k8s.io',
    resource: 'mutatingwebhookconfigurations',
    verbs: ['create'],
    named: { names: WEBHOOK_CONFIGURATIONS, verbs: ['get', 'list', 'watch', 'update', 'patch', 'delete'] },
    clusterScoped: true,
    why: 'as above, for the namespace mutator',
  },
  {
    group: 'admissionregistration.k8s.io',
    resource: 'validatingadmissionpolicies',
    verbs: ['create'],
    named: { names: ADMISSION_POLICIES, verbs: ['get', 'list', 'watch', 'update', 'patch', 'delete'] },
    clusterScoped: true,
    why: 'the rules that need no forest, checked by the API server (webhooks/policies.ts): written, watched by name and removed as the configurations',
  },
  {
    group: 'admissionregistration.k8s.io',
    resource: 'validatingadmissionpolicybindings',
    verbs: ['create'],
    named: { names: ADMISSION_POLICIES, verbs: ['get', 'list', 'watch', 'update', 'patch', 'delete'] },
    clusterScoped: true,
    why: 'as above, their bindings (same names)',
  },
  {
    group: '',
    resource: 'secrets',
    verbs: ['create'],
    named: { names: ['hnc-webhook-server-cert'], verbs: ['get', 'list', 'watch', 'update'] },
    scope: 'hnc-namespace',
    why: "the webhook serving certificate and its CA, shared by the replicas and watched by each (an admin rotates it by deleting it); no access to anyone else's Secrets",
  },
  {
    group: 'coordination.k8s.io',
    resource: 'leases',
    verbs: ['get', 'create', 'update'],
    scope: 'hnc-namespace',
    why: 'leader election (--enable-leader-election)',
  },
  // Propagation: the kinds HNC always propagates (ENFORCED_TYPES) and those most clusters configure.
  // Copying a RoleBinding needs the permissions it grants, or `bind` (and `escalate` for Roles): see docs/deploy.md.
  {
    group: 'rbac.authorization.k8s.io',
    resource: 'roles',
    verbs: [...PROPAGATION, 'escalate', 'bind'],
    why: 'propagated always; escalate to copy Roles granting more than the manager holds',
  },
  // bind and escalate mean nothing on rolebindings (the API server checks them on roles and
  // clusterroles); they are granted only because deploy/rbac shares one rule for both resources.
  { group: 'rbac.authorization.k8s.io', resource: 'rolebindings', verbs: [...PROPAGATION, 'bind', 'escalate'], why: 'propagated always' },
  {
    group: 'rbac.authorization.k8s.io',
    resource: 'clusterroles',
    verbs: ['bind'],
    clusterScoped: true,
    why: 'copying a RoleBinding that refers to a ClusterRole (e.g. admin) binds it',
  },
  { group: 'networking.k8s.io', resource: 'networkpolicies', verbs: PROPAGATION, why: 'commonly propagated (HNCConfiguration)' },
  {
    group: '',
    resource: 'resourcequotas',
    verbs: PROPAGATION,
    why: 'commonly propagated; HRQ watches, creates, updates and deletes the singleton hrq.hnc.x-k8s.io per namespace, and validates HRQ limits by a dry-run create',
  },
  { group: '', resource: 'limitranges', verbs: PROPAGATION, why: 'commonly propagated' },
];

/**
 * Source files the scan skips, and why: code that never runs as the manager's service account.
 * (In a cluster, `--install-crds` would run installCrds as the manager and is refused by this RBAC:
 * the CRDs come with dist/install.yaml.)
 */
const NOT_THE_MANAGER: Record<string, string> = {
  'kube/install.ts': 'installCrds and installRbac run with admin credentials (npm start on the local control plane, tests)',
  [PATHS_FILE]: 'builds the HNC paths; each call of its helpers is scanned where it is made (pathHelpers)',
};

/** Kinds that appear in code with apiVersion and kind but are never stored objects. */
const NOT_STORED_KINDS = new Set([
  'AdmissionReview',
  'Status',
  'DeleteOptions',
  'Config',
  'Table',
  'List',
  'APIResourceList',
  'WatchEvent',
  // The answer's shape when only the metadata is asked for (as=PartialObjectMetadata), never an object stored.
  'PartialObjectMetadata',
]);

// ---------------------------------------------------------------------------------------------
// RBAC as the API server evaluates it, for the manager's service account.

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}
interface RoleObj extends Manifest {
  rules?: Rule[];
  aggregationRule?: { clusterRoleSelectors?: Array<{ matchLabels?: Record<string, string>; matchExpressions?: unknown[] }> };
}
interface BindingObj extends Manifest {
  roleRef: { kind: 'Role' | 'ClusterRole'; name: string };
  subjects?: Array<{ kind: string; name: string; namespace?: string }>;
}
interface Request {
  verb: string;
  group: string;
  resource: string;
  namespace?: string;
  name?: string;
}

const rbacFiles = () =>
  [
    ...new Set([
      MANAGER_RBAC,
      AGGREGATED_ROLES,
      ...readdirSync(RBAC_DIR)
        .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
        .map((f) => join(RBAC_DIR, f)),
    ]),
  ].sort();

class Rbac {
  readonly objects: Manifest[];
  constructor(files: string[]) {
    this.objects = readManifests(...files);
  }

  private of<T extends Manifest>(kind: string): T[] {
    return this.objects.filter((o) => o.kind === kind) as T[];
  }

  /** A ClusterRole's rules after aggregation (as the clusterrole-aggregation controller fills them in). */
  clusterRoleRules(name: string, seen = new Set<string>()): Rule[] {
    const role = this.of<RoleObj>('ClusterRole').find((r) => r.metadata.name === name);
    if (!role || seen.has(name)) return [];
    seen.add(name);
    const selectors = role.aggregationRule?.clusterRoleSelectors;
    if (!selectors) return role.rules ?? [];
    if (selectors.some((s) => s.matchExpressions?.length)) throw new Error(`${name}: matchExpressions are not modelled here`);
    return this.of<RoleObj>('ClusterRole')
      .filter(
        (r) =>
          r.metadata.name !== name &&
          selectors.some((s) =>
            Object.entries(s.matchLabels ?? {}).every(([k, v]) => (r.metadata.labels as Record<string, string> | undefined)?.[k] === v),
          ),
      )
      .flatMap((r) => this.clusterRoleRules(r.metadata.name, seen));
  }

  private isManager(b: BindingObj): boolean {
    const sa = MANAGER_SERVICE_ACCOUNT;
    return (b.subjects ?? []).some(
      (s) =>
        (s.kind === 'ServiceAccount' && s.name === sa.name && (s.namespace ?? b.metadata.namespace) === sa.namespace) ||
        (s.kind === 'User' && s.name === `system:serviceaccount:${sa.namespace}:${sa.name}`) ||
        (s.kind === 'Group' &&
          ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`, 'system:authenticated'].includes(s.name)),
    );
  }

  /** Rules that apply to the manager, with the namespace they are limited to (undefined: everywhere). */
  managerRules(): Array<{ rule: Rule; namespace?: string; via: string }> {
    const out: Array<{ rule: Rule; namespace?: string; via: string }> = [];
    for (const b of this.of<BindingObj>('ClusterRoleBinding').filter((x) => this.isManager(x))) {
      for (const rule of this.clusterRoleRules(b.roleRef.name)) out.push({ rule, via: `ClusterRoleBinding ${b.metadata.name}` });
    }
    for (const b of this.of<BindingObj>('RoleBinding').filter((x) => this.isManager(x))) {
      const ns = b.metadata.namespace!;
      const rules =
        b.roleRef.kind === 'ClusterRole'
          ? this.clusterRoleRules(b.roleRef.name)
          : (this.of<RoleObj>('Role').find((r) => r.metadata.name === b.roleRef.name && r.metadata.namespace === ns)?.rules ?? []);
      for (const rule of rules) out.push({ rule, namespace: ns, via: `RoleBinding ${ns}/${b.metadata.name}` });
    }
    return out;
  }

  can(req: Request): boolean {
    const has = (list: string[] | undefined, v: string) => !!list && (list.includes('*') || list.includes(v));
    return this.managerRules().some(({ rule, namespace }) => {
      if (namespace !== undefined && namespace !== req.namespace) return false;
      if (!has(rule.verbs, req.verb) || !has(rule.apiGroups, req.group) || !has(rule.resources, req.resource)) return false;
      // create, list and watch carry no name: a rule limited to names never allows them.
      if (rule.resourceNames?.length) return req.name !== undefined && rule.resourceNames.includes(req.name);
      return true;
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The source scan.

interface Use {
  group: string;
  resource: string;
  verbs: Set<string>;
  where: string;
}
type Parsed = { kind: 'resource'; group: string; resource: string } | { kind: 'discovery' } | { kind: 'dynamic' };

const SCANNED_DIRS = ['core', 'kube', 'controller', 'webhooks', 'cmd'];
const HOLE = '\u0000';

/**
 * The path helpers of core/api/paths.ts (`export const name = (params) => \`template\``), so that
 * a call such as hierarchyConfigurationPath(ns, Singleton.hierarchy) is scanned as the path it
 * builds, with the verbs of the call site.
 */
function pathHelpers(): Map<string, (args: readonly ts.Expression[]) => string> {
  const sf = ts.createSourceFile(PATHS_FILE, readFileSync(join(ROOT, PATHS_FILE), 'utf8'), ts.ScriptTarget.ES2023, true);
  const helpers = new Map<string, (args: readonly ts.Expression[]) => string>();
  const argValue = (e: ts.Expression | undefined) =>
    !e ? '' : ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e) ? e.text : (constantValue(e) ?? HOLE);
  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st)) continue;
    for (const d of st.declarationList.declarations) {
      const fn = d.initializer;
      if (!ts.isIdentifier(d.name) || !fn || !ts.isArrowFunction(fn) || !ts.isTemplateExpression(fn.body)) continue;
      const params = fn.parameters.map((p) => p.name.getText(sf));
      const body = fn.body;
      helpers.set(d.name.text, (args) => {
        const value = (e: ts.Expression) => {
          const i = ts.isIdentifier(e) ? params.indexOf(e.text) : -1;
          // An optional part (`${name ? `/${name}` : ''}`) is a hole: a name or nothing.
          return i >= 0 ? argValue(args[i]) || HOLE : (constantValue(e) ?? HOLE);
        };
        return body.head.text + body.templateSpans.map((sp) => value(sp.expression) + sp.literal.text).join('');
      });
    }
  }
  return helpers;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(rel);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

/** A value of core/api/constants.ts named by an identifier or a dotted access (GROUP, Plural.X). */
function constantValue(expr: ts.Expression): string | undefined {
  const path: string[] = [];
  let e: ts.Expression = expr;
  while (ts.isPropertyAccessExpression(e)) {
    path.unshift(e.name.text);
    e = e.expression;
  }
  if (!ts.isIdentifier(e)) return undefined;
  let v: unknown = (constants as Record<string, unknown>)[e.text];
  for (const p of path) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
  return typeof v === 'string' ? v : undefined;
}

/** Parses an API path; HOLE marks parts only known at run time. */
function parseApiPath(path: string): Parsed {
  const segs = path.split('?')[0]!.split('/').filter(Boolean);
  let group: string;
  let rest: string[];
  if (segs[0] === 'api') [group, rest] = ['', segs.slice(2)];
  else if (segs[0] === 'apis') [group, rest] = [segs[1] ?? '', segs.slice(3)];
  else return { kind: 'dynamic' };
  if (!rest.length) return { kind: 'discovery' };
  if (group.includes(HOLE)) return { kind: 'dynamic' };
  const resourceSeg = rest[0] === 'namespaces' && rest.length >= 3 ? rest[2]! : rest[0]!;
  // `${plural}${name ? `/${name}` : ''}`: a hole after a literal resource name is its name.
  const resource = resourceSeg.replace(new RegExp(`${HOLE}+$`), '');
  if (!resource || resource.includes(HOLE)) return { kind: 'dynamic' };
  return { kind: 'resource', group, resource };
}

/** Resource name of a kind, as the API server pluralises most kinds. */
const pluralOf = (kind: string) => {
  const k = kind.toLowerCase();
  return k.endsWith('y') ? `${k.slice(0, -1)}ies` : k.endsWith('s') ? `${k}es` : `${k}s`;
};

const CALL_VERBS: Record<string, string[]> = {
  get: ['get'],
  create: ['create'],
  replace: ['update'],
  update: ['update'],
  mergePatch: ['patch'],
  patch: ['patch'],
  delete: ['delete'],
  stream: ['watch'],
  // kube/hierarchy-cache.ts's helper that makes a Reflector.
  reflector: ['list', 'watch'],
};
const METHOD_VERBS: Record<string, string> = { GET: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

function scanFile(rel: string): { uses: Use[]; unknown: string[] } {
  const text = readFileSync(join(ROOT, rel), 'utf8');
  const sf = ts.createSourceFile(rel, text, ts.ScriptTarget.ES2023, true);
  const where = (n: ts.Node) => `${rel}:${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1}`;
  const all: ts.Node[] = [];
  const visit = (n: ts.Node) => {
    all.push(n);
    ts.forEachChild(n, visit);
  };
  visit(sf);

  // `const NAME = <string or template>` anywhere in the file, for `${NAME}` in other templates.
  const consts = new Map<string, ts.Expression>();
  for (const n of all)
    if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer && isStringish(n.initializer))
      consts.set(n.name.text, n.initializer);

  function isStringish(e: ts.Expression): boolean {
    return ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e) || ts.isTemplateExpression(e);
  }
  function render(e: ts.Expression, depth = 0): string {
    if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return e.text;
    if (ts.isTemplateExpression(e)) return e.head.text + e.templateSpans.map((s) => resolve(s.expression, depth) + s.literal.text).join('');
    return HOLE;
  }
  function resolve(e: ts.Expression, depth: number): string {
    const c = constantValue(e);
    if (c !== undefined) return c;
    if (ts.isIdentifier(e) && consts.has(e.text) && depth < 4) return render(consts.get(e.text)!, depth + 1);
    return HOLE;
  }

  /** The verbs implied where a path value is used, following consts, helpers and getters in the file. */
  function verbsAt(node: ts.Node, depth = 0): string[] {
    if (depth > 4) return [];
    let use = node;
    while (
      ts.isParenthesizedExpression(use.parent) ||
      ts.isAsExpression(use.parent) ||
      (ts.isConditionalExpression(use.parent) && use !== use.parent.condition)
    )
      use = use.parent;
    const parent = use.parent;
    if ((ts.isCallExpression(parent) || ts.isNewExpression(parent)) && parent.arguments?.includes(use as ts.Expression)) {
      const callee = parent.expression;
      const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : '';
      if (ts.isNewExpression(parent) && name === 'Reflector') return ['list', 'watch'];
      if (name === 'request' || name === 'raw') {
        const method = parent.arguments[0];
        return method && ts.isStringLiteral(method) && METHOD_VERBS[method.text] ? [METHOD_VERBS[method.text]!] : [];
      }
      return CALL_VERBS[name] ?? [];
    }
    // new Reflector({ path: ... })
    if (ts.isPropertyAssignment(parent) && parent.name.getText(sf) === 'path') {
      const call = parent.parent.parent;
      if (ts.isNewExpression(call) && call.expression.getText(sf) === 'Reflector') return ['list', 'watch'];
      return [];
    }
    // const NAME = path; ... NAME
    if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) {
      const name = parent.name.text;
      return all
        .filter((n) => ts.isIdentifier(n) && n.text === name && n !== parent.name && !ts.isPropertyAccessExpression(n.parent))
        .flatMap((n) => verbsAt(n, depth + 1));
    }
    // const helper = (...) => path; ... helper(...)
    if (
      ts.isArrowFunction(parent) &&
      parent.body === use &&
      ts.isVariableDeclaration(parent.parent) &&
      ts.isIdentifier(parent.parent.name)
    ) {
      const name = parent.parent.name.text;
      return all
        .filter((n) => ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === name)
        .flatMap((n) => verbsAt(n, depth + 1));
    }
    // get path() { return path; } ... this.path   /   path(...) { return path; } ... this.path(...)
    if (ts.isReturnStatement(parent)) {
      const fn = ts.findAncestor(parent, (a) => ts.isGetAccessorDeclaration(a) || ts.isMethodDeclaration(a) || ts.isFunctionDeclaration(a));
      const name = fn && (fn as ts.GetAccessorDeclaration | ts.MethodDeclaration | ts.FunctionDeclaration).name?.getText(sf);
      if (!fn || !name) return [];
      if (ts.isGetAccessorDeclaration(fn))
        return all
          .filter((n) => ts.isPropertyAccessExpression(n) && n.expression.kind === ts.SyntaxKind.ThisKeyword && n.name.text === name)
          .flatMap((n) => verbsAt(n, depth + 1));
      return all
        .filter(
          (n) =>
            ts.isCallExpression(n) &&
            ((ts.isPropertyAccessExpression(n.expression) &&
              n.expression.expression.kind === ts.SyntaxKind.ThisKeyword &&
              n.expression.name.text === name) ||
              (ts.isIdentifier(n.expression) && n.expression.text === name)),
        )
        .flatMap((n) => verbsAt(n, depth + 1));
    }
    return [];
  }

  const uses: Use[] = [];
  const unknown: string[] = [];
  for (const n of all) {
    const helper = ts.isCallExpression(n) && ts.isIdentifier(n.expression) ? PATH_HELPERS.get(n.expression.text) : undefined;
    if (helper) {
      const parsed = parseApiPath(helper((n as ts.CallExpression).arguments));
      if (parsed.kind === 'resource')
        uses.push({ group: parsed.group, resource: parsed.resource, verbs: new Set(verbsAt(n)), where: where(n) });
      else unknown.push(`${where(n)}: ${n.getText(sf)}`);
      continue;
    }
    // API paths
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateExpression(n)) {
      if (ts.isTemplateSpan(n.parent)) continue; // a part of a larger template: scanned with it
      const path = render(n);
      if (!/^\/apis?\//.test(path)) continue;
      const parsed = parseApiPath(path);
      if (parsed.kind === 'discovery') continue;
      if (parsed.kind === 'dynamic') {
        unknown.push(`${where(n)}: ${path.replaceAll(HOLE, '{?}')}`);
        continue;
      }
      uses.push({ group: parsed.group, resource: parsed.resource, verbs: new Set(verbsAt(n)), where: where(n) });
    }
    // Objects written by apiVersion and kind (e.g. applied by server-side apply).
    if (ts.isObjectLiteralExpression(n)) {
      const prop = (name: string) =>
        n.properties.find((p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && p.name.getText(sf) === name)?.initializer;
      const apiVersionExpr = prop('apiVersion');
      const kindExpr = prop('kind');
      if (!apiVersionExpr || !kindExpr) continue;
      const apiVersion = isStringish(apiVersionExpr) ? render(apiVersionExpr) : constantValue(apiVersionExpr);
      const kind = isStringish(kindExpr) ? render(kindExpr) : constantValue(kindExpr);
      if (!apiVersion || !kind || apiVersion.includes(HOLE) || kind.includes(HOLE) || NOT_STORED_KINDS.has(kind)) continue;
      const group = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
      uses.push({ group, resource: pluralOf(kind), verbs: new Set(), where: where(n) });
    }
  }
  return { uses, unknown };
}

const PATH_HELPERS = pathHelpers();

function scanSources(): { uses: Use[]; unknown: string[] } {
  const files = SCANNED_DIRS.flatMap(sourceFiles).filter((f) => !(f in NOT_THE_MANAGER));
  const results = files.map(scanFile);
  return { uses: results.flatMap((r) => r.uses), unknown: results.flatMap((r) => r.unknown) };
}

const needFor = (group: string, resource: string) => NEEDS.find((n) => n.group === group && n.resource === resource);

// ---------------------------------------------------------------------------------------------

describe('the shipped RBAC grants the manager what it needs', () => {
  const rbac = new Rbac(rbacFiles());
  const elsewhere = 'some-team';

  it('binds the manager service account (and only through deploy/rbac)', () => {
    const rules = rbac.managerRules();
    expect(rules.length).toBeGreaterThan(0);
    expect(new Set(rules.map((r) => r.via))).toContain('ClusterRoleBinding hnc-manager-rolebinding');
  });

  it.each(NEEDS.map((n) => [`${n.resource}${n.group ? `.${n.group}` : ''}`, n] as const))('%s', (_, need) => {
    const missing: string[] = [];
    const ns = need.scope === 'hnc-namespace' ? HNC_NAMESPACE : need.clusterScoped ? undefined : elsewhere;
    for (const verb of need.verbs) if (!rbac.can({ verb, group: need.group, resource: need.resource, namespace: ns })) missing.push(verb);
    for (const name of need.named?.names ?? []) {
      for (const verb of need.named!.verbs)
        if (!rbac.can({ verb, group: need.group, resource: need.resource, namespace: ns, name })) missing.push(`${verb} ${name}`);
    }
    expect(missing, `deploy/rbac does not grant ${need.resource}.${need.group || 'core'} ${missing.join(', ')} (${need.why})`).toEqual([]);
  });

  it('limits what is meant to be limited: HNC-namespace resources stay there, named grants stay named', () => {
    for (const need of NEEDS) {
      const all = [...need.verbs, ...(need.named?.verbs ?? [])];
      if (need.scope === 'hnc-namespace') {
        for (const verb of all)
          expect(
            rbac.can({ verb, group: need.group, resource: need.resource, namespace: elsewhere, name: 'x' }),
            `${need.resource} ${verb} outside ${HNC_NAMESPACE}`,
          ).toBe(false);
      }
      if (need.named) {
        const ns = need.scope === 'hnc-namespace' ? HNC_NAMESPACE : need.clusterScoped ? undefined : elsewhere;
        for (const verb of need.named.verbs.filter((v) => !need.verbs.includes(v))) {
          expect(
            rbac.can({ verb, group: need.group, resource: need.resource, namespace: ns, name: 'someone-elses' }),
            `${need.resource} ${verb} on any name`,
          ).toBe(false);
          expect(
            rbac.can({ verb, group: need.group, resource: need.resource, namespace: ns }),
            `${need.resource} ${verb} on the collection`,
          ).toBe(false);
        }
      }
    }
  });

  it('grants no wildcards and nothing outside the table', () => {
    const extra: string[] = [];
    for (const { rule, via } of rbac.managerRules()) {
      expect(rule.nonResourceURLs ?? [], via).toEqual([]);
      for (const list of [rule.apiGroups, rule.resources, rule.verbs])
        expect(list ?? [], `${via}: ${JSON.stringify(rule)}`).not.toContain('*');
      for (const group of rule.apiGroups ?? []) {
        for (const resource of rule.resources ?? []) {
          // events.k8s.io/events is the same Event by another API; the table names the core one.
          const need = needFor(group, resource) ?? (group === 'events.k8s.io' ? needFor('', resource) : undefined);
          if (!need) extra.push(`${resource}.${group || 'core'} (${via})`);
          else
            for (const verb of rule.verbs)
              if (!need.verbs.includes(verb) && !need.named?.verbs.includes(verb))
                extra.push(`${resource}.${group || 'core'} ${verb} (${via})`);
        }
      }
    }
    expect(extra, 'granted but not in NEEDS: add a row saying why, or drop the grant').toEqual([]);
  });

  it('always grants what propagating the enforced types takes', () => {
    for (const t of ENFORCED_TYPES) {
      for (const verb of PROPAGATION)
        expect(rbac.can({ verb, group: t.group, resource: t.resource, namespace: elsewhere }), `${t.resource} ${verb}`).toBe(true);
    }
    // Copying RBAC that grants more than the manager holds: the escalation trade-off (docs/deploy.md).
    expect(rbac.can({ verb: 'escalate', group: 'rbac.authorization.k8s.io', resource: 'roles', namespace: elsewhere })).toBe(true);
    expect(rbac.can({ verb: 'bind', group: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'admin' })).toBe(true);
  });

  it('aggregates every ClusterRole labelled aggregate-to-manager into the manager role', () => {
    const labelled = (rbac.objects as RoleObj[]).filter(
      (o) =>
        o.kind === 'ClusterRole' &&
        (o.metadata.labels as Record<string, string> | undefined)?.['hnc.x-k8s.io/aggregate-to-manager'] === 'true',
    );
    expect(labelled.map((r) => r.metadata.name).sort()).toEqual(['hnc-manager-core', 'hnc-manager-propagation']);
    expect(rbac.clusterRoleRules('hnc-manager-role')).toEqual(labelled.flatMap((r) => r.rules ?? []));
  });

  it("gives HNC's kinds to the built-in admin, edit and view roles", () => {
    const roles = (rbac.objects as RoleObj[]).filter((o) => o.kind === 'ClusterRole');
    const aggregatedTo = (to: string) =>
      roles
        .filter(
          (r) => (r.metadata.labels as Record<string, string> | undefined)?.[`rbac.authorization.k8s.io/aggregate-to-${to}`] === 'true',
        )
        .flatMap((r) => r.rules ?? []);
    const grants = (rules: Rule[], resource: string, verb: string) =>
      rules.some((r) => r.apiGroups?.includes(GROUP) && r.resources?.includes(resource) && r.verbs.includes(verb));
    expect(grants(aggregatedTo('admin'), 'hierarchyconfigurations', 'update')).toBe(true);
    expect(grants(aggregatedTo('admin'), 'subnamespaceanchors', 'create')).toBe(true);
    expect(grants(aggregatedTo('edit'), 'subnamespaceanchors', 'create')).toBe(true);
    expect(grants(aggregatedTo('edit'), 'hierarchyconfigurations', 'update')).toBe(false);
    for (const r of ['hierarchyconfigurations', 'subnamespaceanchors', 'hierarchicalresourcequotas'])
      expect(grants(aggregatedTo('view'), r, 'list')).toBe(true);
    expect(
      aggregatedTo('view')
        .flatMap((r) => r.verbs)
        .filter((v) => !['get', 'list', 'watch'].includes(v)),
    ).toEqual([]);
  });
});

describe("the manager's code uses only what NEEDS lists", () => {
  const scan = scanSources();

  it('parses API paths', () => {
    expect(parseApiPath('/api/v1/namespaces')).toEqual({ kind: 'resource', group: '', resource: 'namespaces' });
    expect(parseApiPath(`/api/v1/namespaces/${HOLE}`)).toEqual({ kind: 'resource', group: '', resource: 'namespaces' });
    expect(parseApiPath(`/api/v1/namespaces/${HOLE}/secrets/x`)).toEqual({ kind: 'resource', group: '', resource: 'secrets' });
    expect(parseApiPath(`/apis/hnc.x-k8s.io/v1alpha2/namespaces/${HOLE}/hierarchyconfigurations${HOLE}`)).toEqual({
      kind: 'resource',
      group: GROUP,
      resource: 'hierarchyconfigurations',
    });
    expect(parseApiPath('/apis/hnc.x-k8s.io/v1alpha2/hncconfigurations')).toEqual({
      kind: 'resource',
      group: GROUP,
      resource: 'hncconfigurations',
    });
    expect(parseApiPath(`/apis/${HOLE}/${HOLE}`)).toEqual({ kind: 'discovery' });
    expect(parseApiPath(`/apis/${HOLE}/${HOLE}/${HOLE}`)).toEqual({ kind: 'dynamic' });
  });

  it('finds the watches and writes it is known to make (the scan itself works)', () => {
    const seen = (group: string, resource: string, verb?: string) =>
      scan.uses.some((u) => u.group === group && u.resource === resource && (!verb || u.verbs.has(verb)));
    expect(seen('', 'namespaces', 'watch')).toBe(true);
    expect(seen(GROUP, 'hierarchyconfigurations', 'watch')).toBe(true);
    expect(seen(GROUP, 'subnamespaceanchors', 'watch')).toBe(true);
    expect(seen(GROUP, 'hncconfigurations', 'watch')).toBe(true);
    expect(seen('apiextensions.k8s.io', 'customresourcedefinitions', 'watch')).toBe(true);
    expect(seen('', 'namespaces', 'create')).toBe(true);
    // Through the path helpers of core/api/paths.ts, with the verb of each call site.
    expect(seen(GROUP, 'hierarchyconfigurations', 'update')).toBe(true);
    expect(seen(GROUP, 'subnamespaceanchors', 'update')).toBe(true);
    expect(seen(GROUP, 'hncconfigurations', 'create')).toBe(true);
    expect(seen('authorization.k8s.io', 'subjectaccessreviews', 'create')).toBe(true);
    expect(seen('', 'secrets', 'create')).toBe(true);
    expect(seen('', 'events', 'create')).toBe(true);
    expect(seen('admissionregistration.k8s.io', 'validatingwebhookconfigurations')).toBe(true);
    expect(seen('admissionregistration.k8s.io', 'mutatingwebhookconfigurations')).toBe(true);
  });

  it('every resource the code addresses is in NEEDS, with the verbs its call sites use', () => {
    const problems: string[] = [];
    for (const u of scan.uses) {
      const need = needFor(u.group, u.resource);
      if (!need) {
        problems.push(
          `${u.where}: ${u.resource}.${u.group || 'core'} is used but not in NEEDS (and so perhaps not granted by deploy/rbac)`,
        );
        continue;
      }
      const allowed = new Set([...need.verbs, ...(need.named?.verbs ?? [])]);
      for (const v of u.verbs) if (!allowed.has(v)) problems.push(`${u.where}: ${v} ${u.resource}.${u.group || 'core'} is not in NEEDS`);
    }
    expect(problems).toEqual([]);
  });

  it('every API path is resolvable (or a discovery request)', () => {
    // A path whose resource is only known at run time (e.g. a propagated type, built by
    // collectionPath from discovery) is not written as a literal /apis/... path; one that is but
    // cannot be resolved here needs its resource made a constant, or an entry in NOT_THE_MANAGER.
    expect(scan.unknown).toEqual([]);
  });

  it('scans no file that does not exist any more', () => {
    for (const f of Object.keys(NOT_THE_MANAGER)) expect(sourceFiles(dirname(f)).map((x) => relative('.', x))).toContain(f);
  });
});
