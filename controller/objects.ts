// The shapes of the built-in objects the controller reads from its caches (raw JSON).
import type { KubeObject } from '../kube/watch/store.js';

export interface NamespaceObject extends KubeObject {
  metadata: KubeObject['metadata'] & {
    name: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
  };
  status?: { phase?: string };
}

export interface CrdObject extends KubeObject {
  metadata: KubeObject['metadata'] & { name: string; deletionTimestamp?: string };
}
