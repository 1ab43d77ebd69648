// A short cache of the API server's *allowed* SubjectAccessReview answers (docs/webhooks.md,
// "Permission checks"). A parent change asks the same question many times over (a burst of
// `kubectl apply`s by one user under one ancestor), and each answer waits on the API server.
// The API server's own webhook authorizer caches allows for minutes; here they are kept ALLOW_TTL_MS:
// a permission revoked through RBAC is honoured for at most that long. Denials and errors are never
// kept, so a permission just granted counts at the next try. Identical checks in flight share one
// review. Pure: the caller gives the clock and the call that asks the API server.
import type { UserInfo } from '../core/api/types.js';

/** A SubjectAccessReview's resourceAttributes. */
export interface ResourceCheck {
  verb: string;
  group: string;
  /** Absent: any version ('*'). */
  version?: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

/** How long an allow is reused: the longest a permission revoked through RBAC still counts. */
export const ALLOW_TTL_MS = 10_000;
/** At most this many allows are kept (the oldest go first): a few hundred bytes each. */
export const MAX_ALLOWS = 4096;

/**
 * The whole question as one string: every field of the user (groups as a set, extra by sorted
 * key, its values as given) and of the check. JSON keeps two different questions apart whatever
 * their strings hold.
 */
export function checkKey(user: UserInfo, check: ResourceCheck): string {
  const extra = Object.entries(user.extra ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => [k, [...v]]);
  return JSON.stringify([
    user.username,
    user.uid ?? '',
    [...(user.groups ?? [])].sort(),
    extra,
    check.verb,
    check.group,
    check.version ?? '*',
    check.resource,
    check.subresource ?? '',
    check.namespace ?? '',
    check.name ?? '',
  ]);
}

export interface AllowCacheOptions {
  ttlMs?: number;
  maxEntries?: number;
  /** Milliseconds (tests inject a clock). */
  now?: () => number;
}

export class AllowCache {
  /** Key → when the review that allowed it was asked; in insertion order, which is about that order. */
  private readonly allows = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<boolean>>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(opts: AllowCacheOptions = {}) {
    this.ttlMs = opts.ttlMs ?? ALLOW_TTL_MS;
    this.maxEntries = opts.maxEntries ?? MAX_ALLOWS;
    this.now = opts.now ?? (() => performance.now());
  }

  /** The answer to `check` for `user`: a recent allow, the review already in flight, or `ask()`. */
  userCan(user: UserInfo, check: ResourceCheck, ask: () => Promise<boolean>): Promise<boolean> {
    const key = checkKey(user, check);
    const at = this.allows.get(key);
    if (at !== undefined) {
      if (this.now() - at < this.ttlMs) return Promise.resolve(true);
      this.allows.delete(key);
    }
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    // The allow counts from when it was asked: the API server answered for that moment or later.
    const askedAt = this.now();
    const answer = ask().then(
      (allowed) => {
        this.inFlight.delete(key);
        if (allowed) this.remember(key, askedAt);
        return allowed;
      },
      (err: unknown) => {
        this.inFlight.delete(key);
        throw err;
      },
    );
    this.inFlight.set(key, answer);
    return answer;
  }

  /** The allows kept (expired ones included until they are passed over or evicted). */
  get size(): number {
    return this.allows.size;
  }

  private remember(key: string, at: number): void {
    this.allows.delete(key);
    this.allows.set(key, at);
    // Oldest first: drop the expired, then whatever is over the bound.
    const now = this.now();
    for (const [k, t] of this.allows) {
      if (this.allows.size <= this.maxEntries && now - t < this.ttlMs) break;
      this.allows.delete(k);
    }
  }
}
