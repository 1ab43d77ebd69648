// The admission objects the manager writes and keeps: the two webhook configurations
// (configurations.ts), the ValidatingAdmissionPolicies and their bindings (policies.ts).
//
// Kept means an edit is repaired at once. A deletion is not: an admin who deletes one while HNC
// misbehaves (HNC's own advice) takes an emergency step, which HNC must not fight. So once this
// run has written them, an object deleted by someone else stays deleted until HNC restarts (a new
// run writes everything again), and the run says so: an Event and a condition on the `config`
// HNCConfiguration (webhooks/index.ts, controller/config). `AdminDeletions` keeps that record.
import { ConditionType, WebhookConfiguration } from '../core/api/constants.js';
import type { NamespaceCondition } from '../core/hierarchy/hierarchy.js';
import type { KubeClient } from '../kube/client.js';
import { applyChanged, CONFIGURATION_PATHS, liveObject, type LiveConfiguration } from './configurations.js';
import { admissionPolicies, POLICY_OBJECTS, policyPath, type PolicyInput } from './policies.js';

export interface KeptObject {
  kind: string;
  /** The collection it is watched in (by name). */
  collection: string;
  name: string;
  /** Its own path: the key of everything below. */
  path: string;
}

export const KEPT_OBJECTS: readonly KeptObject[] = [
  {
    kind: 'ValidatingWebhookConfiguration',
    collection: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
    name: WebhookConfiguration.validating,
    path: CONFIGURATION_PATHS.validating,
  },
  {
    kind: 'MutatingWebhookConfiguration',
    collection: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
    name: WebhookConfiguration.mutating,
    path: CONFIGURATION_PATHS.mutating,
  },
  ...POLICY_OBJECTS.map((o) => ({ ...o, path: policyPath(o.kind, o.name) })),
];

/** The condition's reason on the HNCConfiguration (type BadConfiguration). */
export const ADMISSION_DELETED_REASON = 'AdmissionObjectDeleted';

/** What an admin deleted while this run kept it, in the words of the condition and the Event. */
export function deletedMessage(objects: readonly KeptObject[]): string {
  const names = objects.map((o) => `${o.kind} ${o.name}`).join(', ');
  return (
    `deleted by someone other than HNC while it ran: ${names}. HNC does not write ` +
    `${objects.length === 1 ? 'it' : 'them'} back (an admin's emergency step), so the checks ` +
    `${objects.length === 1 ? 'it makes are' : 'they make are'} off until the HNC manager restarts, which writes every one again`
  );
}

/** The condition on the `config` HNCConfiguration while deleted objects stay deleted. */
export function admissionDeletedCondition(objects: readonly KeptObject[]): NamespaceCondition {
  return { type: ConditionType.BadConfiguration, reason: ADMISSION_DELETED_REASON, message: deletedMessage(objects) };
}

/** Deletions seen by the watches, once this run has written every object (before, a missing one is simply written). */
export class AdminDeletions {
  private armed = false;
  private readonly deleted = new Map<string, KeptObject>();

  /** The run has written (or found) every kept object: a deletion from now on is someone else's. */
  arm(): void {
    this.armed = true;
  }

  /** A watch saw the object go. True when this is news (first deletion of it, once armed). */
  sawDeleted(path: string): boolean {
    const kept = KEPT_OBJECTS.find((o) => o.path === path);
    if (!this.armed || !kept || this.deleted.has(path)) return false;
    this.deleted.set(path, kept);
    return true;
  }

  has(path: string): boolean {
    return this.deleted.has(path);
  }

  list(): KeptObject[] {
    return KEPT_OBJECTS.filter((o) => this.deleted.has(o.path));
  }
}

/**
 * Writes the policies and bindings by server-side apply, each only when the live one differs from
 * what we would write (missing, edited, or from other input), skipping those `skip` names (deleted
 * by an admin). Returns the writes sent.
 */
export async function applyPolicies(
  client: KubeClient,
  input: PolicyInput,
  skip: (path: string) => boolean = () => false,
  read: (path: string) => Promise<LiveConfiguration | undefined> = liveObject(client),
): Promise<number> {
  const items = admissionPolicies(input).map((m) => ({
    manifest: m,
    path: policyPath(m.kind, m.metadata.name),
    compared: (o: unknown) => (o as { spec?: unknown }).spec,
  }));
  return applyChanged(client, items, read, skip);
}
