// The objects webhook's view of propagation in the admission worker (webhooks/admission-thread.ts):
// the controller runs on the main thread, so the worker keeps what the validators read of it — the
// configured types with their modes, and per type the names of its sources by namespace — from
// the changes the main thread sends. Sources are kept by name only: the conflict check
// (conflictingDescendants) asks which namespaces hold a source of a name, never for its content.
import { isPropagating } from '../core/api/types.js';
import type { Hierarchy } from '../core/hierarchy/hierarchy.js';
import { SourceSet, type PropagationContext, type PropagationOptions, type PropagationType } from '../core/propagation/decide.js';
import type { PropagationView } from './handlers.js';

/** A configured type as the config controller resolved it. */
export interface IndexedType extends PropagationType {
  readonly resource: string;
}

/** A source that appeared or went; or, with `reset`, every source of the type forgotten (its propagator stopped). */
export type SourceChange =
  | { group: string; resource: string; namespace: string; name: string; present: boolean; reset?: undefined }
  | { group: string; resource: string; reset: true };

const key = (t: { group: string; resource: string }) => `${t.resource}.${t.group}`;

export class PropagationIndex {
  private types = new Map<string, IndexedType>();
  private readonly sources = new Map<string, SourceSet>();

  constructor(
    private readonly hierarchy: () => Hierarchy,
    private readonly options?: PropagationOptions,
  ) {}

  /** The configured types now (the objects webhook's rules are written from the same list). */
  setTypes(types: readonly IndexedType[]): void {
    this.types = new Map(types.map((t) => [key(t), { group: t.group, resource: t.resource, kind: t.kind, mode: t.mode }]));
  }

  apply(changes: readonly SourceChange[]): void {
    for (const c of changes) {
      const k = key(c);
      if (c.reset) {
        this.sources.delete(k);
        continue;
      }
      let set = this.sources.get(k);
      if (c.present) {
        if (!set) this.sources.set(k, (set = new SourceSet()));
        set.set({ namespace: c.namespace, name: c.name, object: { metadata: { namespace: c.namespace, name: c.name } } });
      } else set?.delete(c.namespace, c.name);
    }
  }

  /** What the handlers read: the same answers the controller's own propagators give. */
  readonly view: PropagationView = {
    context: (group: string, resource: string): PropagationContext | undefined => {
      const type = this.types.get(key({ group, resource }));
      if (!type) return undefined;
      return { hierarchy: this.hierarchy(), type, sources: this.sources.get(key(type)) ?? new SourceSet(), options: this.options };
    },
    propagatingKinds: () => [...this.types.values()].filter((t) => isPropagating(t.mode)).map((t) => ({ group: t.group, kind: t.kind })),
  };
}
