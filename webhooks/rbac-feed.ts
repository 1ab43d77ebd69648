// The main thread's side of the webhooks' RBAC copy (webhooks/rbac-index.ts): Roles and
// RoleBindings come from the controller's propagators, which watch them anyway (an ObjectObserver
// reads each object once as it arrives, before it is cached slim); ClusterRoles and
// ClusterRoleBindings, which nothing else watches, from two watches here, cached compact. Changes
// go out in one batch per turn of the event loop.
//
// Why here and not a watch of RBAC in the admission worker: a propagation of Roles or RoleBindings
// is a watch event per copy, and the worker would decode every one of them (a thousand copies: a
// thousand objects parsed on the thread whose tail this is about) and hold a second cache. From
// here the worker gets only what changes its answers: a Role whose rules could not allow a check
// the validators make (AUTHORIZE_CHECKS) is never sent at all; a RoleBinding is sent as its role
// and subject keys (docs/webhooks.md, "Local authorization").
import {
  compactBinding,
  compactRules,
  couldAllowAny,
  type BindingObject,
  type RbacBinding,
  type RbacRule,
  type RoleObject,
} from '../core/access/rbac.js';
import type { PropagatableObject } from '../core/propagation/copy.js';
import { AUTHORIZE_CHECKS } from '../core/validation/hierarchy-configuration.js';
import type { KubeClient } from '../kube/client.js';
import type { Logger } from '../kube/log.js';
import { Reflector, type ReflectorOptions } from '../kube/watch/reflector.js';
import type { KubeObject } from '../kube/watch/store.js';
import type { RbacChange, RbacKind } from './rbac-index.js';

/** What the controller's propagators call for each object of a type (controller/objects/propagator.ts ObjectObserver). */
export interface RbacObserver<S> {
  summarize(obj: PropagatableObject): S;
  changed(namespace: string, name: string, summary: S | undefined): void;
  synced(synced: boolean): void;
  fresh(fresh: boolean): void;
}

const keep = couldAllowAny(AUTHORIZE_CHECKS);

const rulesOf = (obj: unknown): RbacRule[] => compactRules(obj as RoleObject, keep);
const bindingOf = (obj: unknown, namespace: string): RbacBinding | undefined => compactBinding(obj as BindingObject, namespace);

export type Compact = KubeObject & { rules?: RbacRule[]; binding?: RbacBinding };

export class RbacFeed {
  private pending: RbacChange[] = [];
  /** Roles and ClusterRoles whose rules were sent: one that no longer grants anything is sent again (as nothing). */
  private readonly sentRoles = new Set<string>();
  /** Kinds whose watch is failing. */
  private readonly stale = new Set<RbacKind>();
  private reflectors: Array<Pick<Reflector<Compact>, 'stop'>> = [];
  private closed = false;

  constructor(
    private readonly opts: {
      client: KubeClient;
      logger: Logger;
      /** Gets each batch of changes (the admission worker's message, or the main thread's own index). */
      send: (changes: RbacChange[]) => void;
      /** The server-side timeout of the ClusterRole and ClusterRoleBinding watches (Reflector's default unless set; tests shorten it). */
      watchTimeoutSeconds?: { min: number; max: number };
      /** Makes the two watches (tests: one whose onHealth they drive). */
      reflector?: (opts: ReflectorOptions<Compact>) => Pick<Reflector<Compact>, 'addHandler' | 'start' | 'stop'>;
    },
  ) {}

  /** For the Role propagator. */
  readonly roles: RbacObserver<RbacRule[]> = {
    summarize: (obj) => rulesOf(obj),
    changed: (ns, name, rules) => this.role('Role', ns, name, rules),
    synced: (synced) => {
      if (!synced) for (const key of this.sentRoles) if (key.startsWith('Role/')) this.sentRoles.delete(key);
      this.stale.delete('Role');
      this.push({ k: 'Role', synced });
    },
    fresh: (fresh) => this.fresh('Role', fresh),
  };

  /** For the RoleBinding propagator. */
  readonly roleBindings: RbacObserver<RbacBinding | undefined> = {
    summarize: (obj) => bindingOf(obj, obj.metadata?.namespace ?? ''),
    changed: (ns, name, binding) => this.push(binding ? { k: 'RoleBinding', ns, name, binding } : { k: 'RoleBinding', ns, name }),
    synced: (synced) => {
      this.stale.delete('RoleBinding');
      this.push({ k: 'RoleBinding', synced });
    },
    fresh: (fresh) => this.fresh('RoleBinding', fresh),
  };

  /** Starts the watches of ClusterRoles and ClusterRoleBindings. */
  start(): void {
    const { client, logger } = this.opts;
    const watch = (path: string, kind: 'ClusterRole' | 'ClusterRoleBinding', transform: (o: Compact) => Compact) => {
      let listed = false;
      const make = this.opts.reflector ?? ((o: ReflectorOptions<Compact>) => new Reflector<Compact>(o));
      const r = make({
        client,
        path,
        name: kind,
        logger,
        transform,
        watchTimeoutSeconds: this.opts.watchTimeoutSeconds,
        // The first list syncs the kind; after that, the watch's health is its freshness.
        onHealth: (healthy, reason) => {
          if (healthy && !listed) {
            listed = true;
            // As the propagators' synced: a sync starts the kind fresh, whatever was reported before it.
            this.stale.delete(kind);
            this.push({ k: kind, synced: true });
          } else this.fresh(kind, healthy, reason);
        },
      });
      r.addHandler((event, obj) => {
        const name = obj.metadata?.name ?? '';
        const gone = event === 'DELETED';
        if (kind === 'ClusterRole') this.role(kind, '', name, gone ? undefined : obj.rules);
        else this.push(!gone && obj.binding ? { k: kind, ns: '', name, binding: obj.binding } : { k: kind, ns: '', name });
      });
      r.start();
      return r;
    };
    // Cached compact: the store keeps each object's name, version and what authorization reads.
    const meta = (o: Compact) => ({ name: o.metadata?.name, resourceVersion: o.metadata?.resourceVersion });
    this.reflectors = [
      watch('/apis/rbac.authorization.k8s.io/v1/clusterroles', 'ClusterRole', (o) => ({ metadata: meta(o), rules: rulesOf(o) }) as Compact),
      watch(
        '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
        'ClusterRoleBinding',
        (o) => ({ metadata: meta(o), binding: bindingOf(o, '') }) as Compact,
      ),
    ];
  }

  async stop(): Promise<void> {
    this.close();
    await Promise.all(this.reflectors.map((r) => r.stop()));
  }

  /**
   * Unsyncs the copy now, and sends nothing more: the webhooks stop. They drain (serve on for a
   * while behind a Service) after the admission thread has stopped taking messages, so changes to
   * RBAC would no longer reach the copy; until they stop, every check is a SubjectAccessReview.
   */
  close(): void {
    if (this.closed) return;
    this.pending = (['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'] as const).map((k) => ({ k, synced: false }));
    this.flush();
    this.closed = true;
  }

  /**
   * A kind's watch failed (false) or follows the server again (true; reflector onHealth). Until
   * then nothing is answered from the copy: a binding removed meanwhile would still be honoured.
   * Sent at once when the watch fails; when it recovers, in order after what it delivered.
   */
  private fresh(k: RbacKind, fresh: boolean, reason?: string): void {
    if (this.closed || fresh !== this.stale.has(k)) return;
    if (fresh) this.stale.delete(k);
    else this.stale.add(k);
    if (fresh) this.opts.logger.info({ kind: k }, 'RBAC watch healthy again: checks allowed by RBAC are answered from memory');
    else this.opts.logger.warn({ kind: k, reason }, 'RBAC watch failing: every authorization check asks the API server until it recovers');
    this.push({ k, fresh });
    if (!fresh) this.flush();
  }

  private role(k: 'Role' | 'ClusterRole', ns: string, name: string, rules: RbacRule[] | undefined): void {
    const key = `${k}/${ns}/${name}`;
    if (rules && rules.length) {
      this.sentRoles.add(key);
      this.push({ k, ns, name, rules });
    } else if (this.sentRoles.delete(key)) this.push({ k, ns, name });
  }

  private push(c: RbacChange): void {
    if (this.closed) return;
    if (this.pending.length === 0) setImmediate(() => this.flush());
    this.pending.push(c);
  }

  /** Sends what is pending now (also on stop). */
  flush(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.opts.send(batch);
  }
}
