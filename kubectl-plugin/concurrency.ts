// Reading namespace by namespace: a subtree of a thousand namespaces must not become a thousand
// requests at once. Each would open its own connection, and the API server queues (or refuses,
// 429) what is past its in-flight limits while every request's --request-timeout runs.

/** Requests in flight at once when reading namespace by namespace (tree, get, access, the preview). */
export const PER_NAMESPACE_CONCURRENCY = 32;

/** Runs calls at most `limit` at a time, in the order asked. */
export function limiter(limit: number): <T>(call: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(call: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await call();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/** Runs fn over items, at most `limit` at a time, keeping the order. */
export function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const run = limiter(limit);
  return Promise.all(items.map((item) => run(() => fn(item))));
}
