// What an integration test needs from the shared control plane: clients as admin or as any
// user, and namespaces of its own that it cleans up.
import { expect, inject } from 'vitest';
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { ApiError, KubeClient, isNotFound } from '../../kube/client.js';
import { mintUser, loadClusterCa } from '../../local-cluster/index.js';
import type { CertificateAuthority } from '../../kube/pki.js';
import { runProcess, type ProcessResult } from './process.js';

export interface TestUser {
  name: string;
  kubeconfigPath: string;
  client: KubeClient;
}

export class TestCluster {
  private readonly created: string[] = [];
  private constructor(
    readonly admin: KubeClient,
    readonly kubeconfigPath: string,
    readonly stateDir: string,
  ) {}

  static async connect(): Promise<TestCluster> {
    const kubeconfig = inject('kubeconfig');
    return new TestCluster(await KubeClient.fromKubeconfig(kubeconfig), kubeconfig, inject('stateDir'));
  }

  async user(name: string, groups: string[] = []): Promise<TestUser> {
    const minted = await mintUser(this.stateDir, name, groups);
    return { name, kubeconfigPath: minted.kubeconfigPath, client: await KubeClient.fromKubeconfig(minted.kubeconfigPath) };
  }

  ca(): Promise<CertificateAuthority> {
    return loadClusterCa(this.stateDir);
  }

  /** A name no other test uses: `<prefix>-<random>`. */
  static uniqueName(prefix: string): string {
    return `${prefix}-${randomBytes(3).toString('hex')}`;
  }

  /** Creates a namespace this test owns; cleanup() deletes it. */
  async namespace(prefix: string, labels: Record<string, string> = {}): Promise<string> {
    const name = TestCluster.uniqueName(prefix);
    await this.admin.create('/api/v1/namespaces', { metadata: { name, labels } });
    this.created.push(name);
    return name;
  }

  async cleanup(): Promise<void> {
    await Promise.all(
      this.created.splice(0).map((ns) =>
        this.admin.delete(`/api/v1/namespaces/${ns}`).catch((e: unknown) => {
          if (!isNotFound(e)) throw e;
        }),
      ),
    );
  }
}

/** Polls until check() returns a value that is not undefined, or fails with the last error. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export type KubectlResult = ProcessResult;

/** Runs the real kubectl as the given kubeconfig's user; never throws on a non-zero exit. */
export function kubectl(kubeconfigPath: string, args: string[], input?: string): Promise<KubectlResult> {
  // PATH leads with the built kubectl-hns, so `kubectl hns ...` runs through kubectl's plugin lookup.
  const env = { ...process.env, KUBECONFIG: kubeconfigPath, PATH: `${inject('pluginDir')}:${process.env.PATH ?? ''}`, NO_COLOR: '1' };
  return runProcess(inject('kubectl'), args, { env, input });
}

/**
 * Polls until the API server's authorizer lets `client` do `verb` on `resource` in `namespace`
 * (a SelfSubjectAccessReview). Its RBAC cache sees a RoleBinding a moment after reads of it do,
 * so a request sent as soon as a copy can be read may still be refused, the more so under load.
 */
export async function eventuallyAllowed(
  client: KubeClient,
  attributes: { namespace: string; verb: string; group: string; resource: string },
  what: string,
  timeoutMs = 30_000,
): Promise<void> {
  await eventually(
    async () => {
      const review = await client.create<{ status?: { allowed?: boolean } }>('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: attributes },
      });
      return review.status?.allowed ? true : undefined;
    },
    what,
    timeoutMs,
  );
}

/** Polls until read() returns a value deeply equal to `expected`; on timeout fails with the last value. */
export async function eventuallyEqual<T>(read: () => Promise<T>, expected: T, what: string, timeoutMs = 30_000): Promise<void> {
  let last: T | undefined;
  try {
    await eventually(
      async () => {
        last = await read();
        return isDeepStrictEqual(last, expected) ? true : undefined;
      },
      what,
      timeoutMs,
    );
  } catch {
    throw new Error(`timed out waiting for ${what}: expected ${JSON.stringify(expected)}, last saw ${JSON.stringify(last)}`);
  }
}

/** The ApiError a request fails with (the test fails if it succeeds or fails otherwise). */
export async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

/** Read-modify-write of one object, retried on a conflict (the controller writes status too). */
export async function update<T extends object>(client: KubeClient, path: string, change: (obj: T) => T): Promise<void> {
  for (;;) {
    const obj = await client.get<T>(path);
    try {
      await client.replace(path, change(obj));
      return;
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 409)) throw err;
    }
  }
}
