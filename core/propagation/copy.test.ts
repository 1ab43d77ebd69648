import { deepFreeze } from '../util/freeze.js';
import { describe, expect, it } from 'vitest';
import {
  canonical,
  copyPolicy,
  DEFAULT_NEVER_COPIED_KEYS,
  desiredCopy,
  equalCopy,
  InternPool,
  isCopy,
  isCurrentCopy,
  slimCopy,
  isHncKey,
  KeySet,
  needsRecreate,
  updatedCopy,
  type PropagatableObject,
} from './copy.js';

/** The fields of a served RoleBinding copy these tests edit. */
interface RoleBindingJson {
  metadata: { labels: Record<string, string>; annotations?: Record<string, string> } & Record<string, unknown>;
  subjects: { name: string }[];
  roleRef: object;
  status?: unknown;
}

const RB = { group: 'rbac.authorization.k8s.io', kind: 'RoleBinding' };
const SECRET = { group: '', kind: 'Secret' };
const CONFIGMAP = { group: '', kind: 'ConfigMap' };

/** A RoleBinding as the API server returns it, with all the server-set metadata. */
function served(
  overrides: { labels?: Record<string, string>; annotations?: Record<string, string>; roleRef?: object } = {},
): PropagatableObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: {
      name: 'admins',
      namespace: 'root',
      uid: 'uid-1',
      resourceVersion: '42',
      generation: 3,
      creationTimestamp: '2025-01-01T00:00:00Z',
      managedFields: [{ manager: 'kubectl' }],
      ownerReferences: [{ kind: 'Thing', name: 'x' }],
      generateName: 'adm-',
      labels: overrides.labels ?? { team: 'a' },
      annotations: overrides.annotations ?? {},
    },
    roleRef: overrides.roleRef ?? { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
    subjects: [{ kind: 'Group', name: 'team-a', apiGroup: 'rbac.authorization.k8s.io' }],
    status: { something: true },
  } as PropagatableObject;
}

/** The copy as it would come back from the server after being written into `ns`. */
function servedCopy(copy: PropagatableObject, ns: string, extra: Record<string, unknown> = {}): PropagatableObject {
  return {
    ...structuredClone(copy),
    metadata: {
      ...structuredClone(copy.metadata),
      namespace: ns,
      uid: 'uid-copy',
      resourceVersion: '7',
      creationTimestamp: '2025-02-02T00:00:00Z',
      managedFields: [{ manager: 'hnc' }],
      ...extra,
    },
  };
}

describe('the canonical copy of a source (docs/behaviour.md §5.6)', () => {
  it('keeps the name, labels, annotations and every non-metadata field but status', () => {
    expect(desiredCopy(served(), 'root', 'child')).toEqual({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: {
        name: 'admins',
        namespace: 'child',
        labels: { team: 'a', 'app.kubernetes.io/managed-by': 'hnc.x-k8s.io', 'hnc.x-k8s.io/inherited-from': 'root' },
      },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'admin' },
      subjects: [{ kind: 'Group', name: 'team-a', apiGroup: 'rbac.authorization.k8s.io' }],
    });
  });

  it('strips every key whose prefix ends with hnc.x-k8s.io, and forces managed-by', () => {
    const src = served({
      labels: { 'root.tree.hnc.x-k8s.io/depth': '0', 'hnc.x-k8s.io/whatever': 'x', 'app.kubernetes.io/managed-by': 'Helm', keep: 'me' },
      annotations: { 'propagate.hnc.x-k8s.io/treeSelect': 'child', 'note.example.com/x': 'y', 'nothnc.x-k8s.io.example.com/z': 'kept' },
    });
    const copy = desiredCopy(src, 'root', 'child');
    expect(copy.metadata?.labels).toEqual({
      keep: 'me',
      'app.kubernetes.io/managed-by': 'hnc.x-k8s.io',
      'hnc.x-k8s.io/inherited-from': 'root',
    });
    expect(copy.metadata?.annotations).toEqual({ 'note.example.com/x': 'y', 'nothnc.x-k8s.io.example.com/z': 'kept' });
  });

  it('never copies GitOps tracking keys by default', () => {
    const src = served({
      labels: {
        'app.kubernetes.io/instance': 'my-app',
        'argocd.argoproj.io/instance': 'my-app',
        'kustomize.toolkit.fluxcd.io/name': 'apps',
        'kustomize.toolkit.fluxcd.io/namespace': 'flux-system',
        'helm.toolkit.fluxcd.io/name': 'r',
        'kapp.k14s.io/app': '123',
        team: 'a',
      },
      annotations: {
        'argocd.argoproj.io/tracking-id': 'my-app:rbac.authorization.k8s.io/RoleBinding:root/admins',
        'meta.helm.sh/release-name': 'r',
        'kubectl.kubernetes.io/last-applied-configuration': '{}',
        'argocd.argoproj.io/sync-wave': '1',
      },
    });
    const copy = desiredCopy(src, 'root', 'child');
    expect(copy.metadata?.labels).toEqual({
      team: 'a',
      'app.kubernetes.io/managed-by': 'hnc.x-k8s.io',
      'hnc.x-k8s.io/inherited-from': 'root',
    });
    expect(copy.metadata?.annotations).toEqual({ 'argocd.argoproj.io/sync-wave': '1' });
    for (const { key, reason } of DEFAULT_NEVER_COPIED_KEYS) expect(reason.length, key).toBeGreaterThan(20);
  });

  it('takes never-copied keys and HNC unpropagated flags from the policy, prefixes included', () => {
    const policy = copyPolicy({
      neverCopied: ['example.com/*'],
      unpropagatedLabels: ['team', 'app.kubernetes.io/managed-by'],
      unpropagatedAnnotations: ['note'],
    });
    const src = served({
      labels: { team: 'a', 'example.com/x': '1', 'app.kubernetes.io/instance': 'kept now' },
      annotations: { note: 'n', 'example.com/y': '2', team: 'kept' },
    });
    const copy = desiredCopy(src, 'root', 'child', policy);
    expect(copy.metadata?.labels).toEqual({ 'app.kubernetes.io/instance': 'kept now', 'hnc.x-k8s.io/inherited-from': 'root' });
    expect(copy.metadata?.annotations).toEqual({ team: 'kept' });
  });

  it('does not share structure with the source, and cannot be changed by accident', () => {
    const src = served();
    const copy = desiredCopy(src, 'root', 'child') as { subjects: { name: string }[] };
    expect(() => {
      copy.subjects[0]!.name = 'changed';
    }).toThrow(TypeError);
    (src as { subjects: { name: string }[] }).subjects[0]!.name = 'changed at the source';
    expect(copy.subjects[0]!.name).toBe('team-a');
  });

  it('prepares a frozen (cached) source once for every destination', () => {
    const src = deepFreeze(served());
    const a = desiredCopy(src, 'root', 'a') as { subjects: unknown; metadata: { namespace: string } };
    const b = desiredCopy(src, 'root', 'b') as { subjects: unknown; metadata: { namespace: string } };
    expect(a.subjects).toBe(b.subjects);
    expect([a.metadata.namespace, b.metadata.namespace]).toEqual(['a', 'b']);
    // A new version of the source is a new object: prepared anew.
    const changed = deepFreeze(served({ labels: { team: 'b' } }));
    expect(desiredCopy(changed, 'root', 'a').metadata?.labels?.team).toBe('b');
    expect(equalCopy(desiredCopy(src, 'root', 'a'), desiredCopy(changed, 'root', 'a'))).toBe(false);
    // updatedCopy's object and metadata are its own; the content below stays shared and frozen.
    const upd = updatedCopy({ ...a, metadata: { ...a.metadata, resourceVersion: '7' } }, b) as {
      subjects: { name: string }[];
      metadata: Record<string, unknown>;
    };
    expect(Object.isFrozen(upd) || Object.isFrozen(upd.metadata)).toBe(false);
    expect(upd.subjects).toBe(b.subjects);
    expect(() => {
      upd.subjects[0]!.name = 'x';
    }).toThrow(TypeError);
    upd.metadata.resourceVersion = '8';
    expect((b as { metadata: Record<string, unknown> }).metadata.resourceVersion).toBeUndefined();
  });

  it('recognises keys and copies', () => {
    expect(isHncKey('hnc.x-k8s.io/inherited-from')).toBe(true);
    expect(isHncKey('a.tree.hnc.x-k8s.io/depth')).toBe(true);
    expect(isHncKey('example.com/hnc.x-k8s.io')).toBe(false);
    expect(isCopy(desiredCopy(served(), 'root', 'child'))).toBe(true);
    expect(isCopy(served())).toBe(false);
    expect(new KeySet(['a/*', 'b']).has('a/x')).toBe(true);
    expect(new KeySet(['a/*', 'b']).has('ab/x')).toBe(false);
  });
});

describe('equalCopy: an unchanged copy is never rewritten', () => {
  const desired = desiredCopy(served(), 'root', 'child');

  it('ignores server-set metadata, status, apiVersion/kind presence and empty maps', () => {
    const existing = servedCopy(desired, 'child', { annotations: {}, finalizers: ['x'], ownerReferences: [{ kind: 'Y' }] });
    (existing as { status?: unknown }).status = { observed: 1 };
    expect(equalCopy(existing, desired)).toBe(true);
    const { apiVersion: _a, kind: _k, ...listItem } = existing;
    expect(equalCopy(listItem, desired)).toBe(true);
    expect(canonical(existing)).toEqual(canonical(desired));
  });

  it('sees a change in the body, a label, an annotation or the source namespace', () => {
    const base = servedCopy(desired, 'child');
    const edit = (f: (o: RoleBindingJson) => void) => {
      const o = structuredClone(base) as unknown as RoleBindingJson;
      f(o);
      return o as unknown as PropagatableObject;
    };
    expect(
      equalCopy(
        edit((o) => (o.subjects[0]!.name = 'other')),
        desired,
      ),
    ).toBe(false);
    expect(
      equalCopy(
        edit((o) => (o.metadata.labels.extra = '1')),
        desired,
      ),
    ).toBe(false);
    expect(
      equalCopy(
        edit((o) => (o.metadata.annotations = { 'argocd.argoproj.io/tracking-id': 'x' })),
        desired,
      ),
    ).toBe(false);
    expect(
      equalCopy(
        edit((o) => (o.metadata.labels['hnc.x-k8s.io/inherited-from'] = 'team')),
        desired,
      ),
    ).toBe(false);
    expect(
      equalCopy(
        edit((o) => delete o.metadata.labels['app.kubernetes.io/managed-by']),
        desired,
      ),
    ).toBe(false);
  });

  it('isCurrentCopy agrees with equalCopy, for plain and for cached (frozen) objects', () => {
    const base = servedCopy(desired, 'child');
    const variants: PropagatableObject[] = [
      base,
      { ...structuredClone(base), status: { observed: 2 } } as PropagatableObject,
      ...[
        (o: RoleBindingJson) => (o.subjects[0]!.name = 'other'),
        (o: RoleBindingJson) => (o.metadata.labels.extra = '1'),
        (o: RoleBindingJson) => (o.metadata.labels['hnc.x-k8s.io/inherited-from'] = 'team'),
        // What the comparison without canonical() must see, each way round.
        (o: RoleBindingJson) => ((o as unknown as Record<string, unknown>).extraField = { a: 1 }),
        (o: RoleBindingJson) => delete (o as unknown as Record<string, unknown>).roleRef,
        (o: RoleBindingJson) => ((o as unknown as Record<string, unknown>).roleRef = undefined),
        (o: RoleBindingJson) => ((o as unknown as Record<string, unknown>).kind = 'Other'),
        (o: RoleBindingJson) => (o.metadata.name = 'renamed'),
        (o: RoleBindingJson) => delete o.metadata.labels['app.kubernetes.io/managed-by'],
        (o: RoleBindingJson) => (o.metadata.labels = {}),
        (o: RoleBindingJson) => (o.metadata.labels['team.hnc.x-k8s.io/x'] = 'ignored'),
        (o: RoleBindingJson) => ((o.metadata as { annotations?: Record<string, string> }).annotations = { note: 'x' }),
        (o: RoleBindingJson) => ((o.metadata as { annotations?: Record<string, string> }).annotations = { 'hnc.x-k8s.io/y': 'z' }),
      ].map((f) => {
        const o = structuredClone(base) as unknown as RoleBindingJson;
        f(o);
        return o as unknown as PropagatableObject;
      }),
    ];
    for (const frozen of [false, true]) {
      const src = frozen ? deepFreeze(served()) : served();
      for (const v of variants) {
        const existing = frozen ? deepFreeze(structuredClone(v)) : v;
        const want = equalCopy(existing, desiredCopy(src, 'root', 'child'));
        expect(isCurrentCopy(existing, src, 'root')).toBe(want);
        expect(isCurrentCopy(existing, src, 'root')).toBe(want); // remembered answers stay right
        expect(isCurrentCopy(existing, src, 'other-root')).toBe(false);
      }
    }
  });

  it('ignores key order', () => {
    const reordered = servedCopy(desired, 'child') as unknown as RoleBindingJson;
    reordered.roleRef = { name: 'admin', kind: 'ClusterRole', apiGroup: 'rbac.authorization.k8s.io' };
    expect(equalCopy(reordered as unknown as PropagatableObject, desired)).toBe(true);
  });
});

describe('slim copies: what the propagation cache keeps', () => {
  const desired = desiredCopy(served(), 'root', 'child');
  const full = servedCopy(desired, 'child', { finalizers: ['example.com/keep'], ownerReferences: [{ kind: 'Y', name: 'y' }] });

  it('keeps identity, metadata others hold, status and roleRef; the rest only as canonical text', () => {
    const slim = slimCopy({ ...full, status: { ok: true } } as PropagatableObject) as unknown as Record<string, unknown> & RoleBindingJson;
    expect(slim.metadata).toEqual({
      name: 'admins',
      namespace: 'child',
      uid: 'uid-copy',
      resourceVersion: '7',
      labels: full.metadata?.labels,
      finalizers: ['example.com/keep'],
      ownerReferences: [{ kind: 'Y', name: 'y' }],
    });
    expect(slim.subjects).toBeUndefined();
    expect(slim.roleRef).toEqual((full as unknown as RoleBindingJson).roleRef);
    expect(slim.status).toEqual({ ok: true });
    expect(canonical(slim as unknown as PropagatableObject)).toEqual(canonical(full));
    expect(JSON.stringify(slim)).not.toContain('team-a'); // the text is not serialized
  });

  it('decides exactly as the full copy does', () => {
    const variants: PropagatableObject[] = [full];
    for (const f of [
      (o: RoleBindingJson) => (o.subjects[0]!.name = 'other'),
      (o: RoleBindingJson) => (o.metadata.labels.extra = '1'),
      (o: RoleBindingJson) => (o.roleRef = { ...o.roleRef, name: 'view' }),
    ]) {
      const o = structuredClone(full) as unknown as RoleBindingJson;
      f(o);
      variants.push(o as unknown as PropagatableObject);
    }
    const src = deepFreeze(served());
    for (const v of variants) {
      const slim = deepFreeze(slimCopy(structuredClone(v)));
      expect(equalCopy(slim, desired)).toBe(equalCopy(v, desired));
      expect(isCurrentCopy(slim, src, 'root')).toBe(equalCopy(v, desired));
      expect(needsRecreate(slim, desired, RB)).toBe(needsRecreate(v, desired, RB));
      expect(updatedCopy(slim, desired)).toEqual(updatedCopy(v, desired));
    }
  });

  it('shares what copies of one source have in common through a pool, and the pool stays bounded', () => {
    const pool = new InternPool(20);
    const a = slimCopy(structuredClone(full), pool) as unknown as RoleBindingJson;
    const b = slimCopy(servedCopy(desired, 'other'), pool) as unknown as RoleBindingJson;
    expect(b.metadata.labels).toBe(a.metadata.labels);
    expect(b.roleRef).toBe(a.roleRef);
    expect(Object.isFrozen(a.metadata.labels)).toBe(true);
    expect(canonical(b as unknown as PropagatableObject)).toEqual(canonical(full));
    expect(b.metadata.namespace).toBe('other');
    // Full: it starts afresh, and what it hands out is still right.
    for (let i = 0; i < 30; i++) expect(pool.string(`s${i}`)).toBe(`s${i}`);
    expect(pool.size).toBeLessThanOrEqual(20);
    const c = slimCopy(servedCopy(desired, 'third'), pool);
    expect(equalCopy(c, desired)).toBe(true);
  });

  it("leaves sources, users' objects and immutable data as they are", () => {
    const source = served();
    expect(slimCopy(source)).toBe(source);
    const immutable = { ...full, immutable: true } as PropagatableObject;
    expect(slimCopy(immutable)).toBe(immutable);
  });
});

describe('updates and recreation', () => {
  it('updates keep the resourceVersion and what others hold on the copy', () => {
    const desired = desiredCopy(served(), 'root', 'child');
    const existing = servedCopy(desired, 'child', { finalizers: ['example.com/keep'], ownerReferences: [{ kind: 'Y', name: 'y' }] });
    (existing as { status?: unknown }).status = { ok: true };
    const out = updatedCopy(existing, desired) as unknown as RoleBindingJson;
    expect(out.metadata).toEqual({
      ...desired.metadata,
      resourceVersion: '7',
      finalizers: ['example.com/keep'],
      ownerReferences: [{ kind: 'Y', name: 'y' }],
    });
    expect(out.status).toEqual({ ok: true });
    expect(out.subjects).toEqual((desired as unknown as RoleBindingJson).subjects);
  });

  it('recreates a RoleBinding whose roleRef changes, and only then', () => {
    const before = desiredCopy(served(), 'root', 'child');
    const newRole = desiredCopy(
      served({ roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' } }),
      'root',
      'child',
    );
    const newLabel = desiredCopy(served({ labels: { team: 'b' } }), 'root', 'child');
    expect(needsRecreate(before, newRole, RB)).toBe(true);
    expect(needsRecreate(before, newLabel, RB)).toBe(false);
    expect(needsRecreate(before, newRole, { group: 'rbac.authorization.k8s.io', kind: 'Role' })).toBe(false);
  });

  it('recreates a Secret whose type changes, and immutable ConfigMaps and Secrets whose content changes', () => {
    const secret = (type: string | undefined, data: Record<string, string>, immutable?: boolean) =>
      ({
        kind: 'Secret',
        metadata: { name: 's' },
        ...(type && { type }),
        data,
        ...(immutable !== undefined && { immutable }),
      }) as PropagatableObject;
    expect(needsRecreate(secret(undefined, { a: 'MQ==' }), secret('Opaque', { a: 'Mg==' }), SECRET)).toBe(false);
    expect(needsRecreate(secret('Opaque', {}), secret('example.com/token', {}), SECRET)).toBe(true);
    expect(needsRecreate(secret('Opaque', { a: 'MQ==' }, true), secret('Opaque', { a: 'Mg==' }, true), SECRET)).toBe(true);
    expect(needsRecreate(secret('Opaque', { a: 'MQ==' }, true), secret('Opaque', { a: 'MQ==' }), SECRET)).toBe(true); // immutable can't be unset
    expect(needsRecreate(secret('Opaque', { a: 'MQ==' }, true), secret('Opaque', { a: 'MQ==' }, true), SECRET)).toBe(false);
    const cm = (data: Record<string, string>, immutable?: boolean) =>
      ({ metadata: { name: 'c' }, data, ...(immutable !== undefined && { immutable }) }) as PropagatableObject;
    expect(needsRecreate(cm({ a: '1' }, true), cm({ a: '2' }, true), CONFIGMAP)).toBe(true);
    expect(needsRecreate(cm({ a: '1' }), cm({ a: '2' }, true), CONFIGMAP)).toBe(false);
  });
});
