// `kubectl hns describe NS --object TYPE/NAME`: why an object is, or is not, propagated into NS.
// A pure function of what was read (model.ts ExplainView), deciding with the same core functions
// the controller uses (core/propagation): among the same-named sources in NS's ancestors, from the
// root down, the first one that should propagate into NS wins; a halted NS receives nothing; an
// object of NS's own with that name (no inherited-from label) is never overwritten.
//
//   Role reader in namespace dev: propagated from team-a
//     Type: roles (mode Propagate)
//     Ancestors, highest first: org, team-a
//     - team-a: source, propagates to dev: it wins (the highest ancestor whose source does)
//     In dev: a copy from team-a (hnc.x-k8s.io/inherited-from=team-a)
import { Label, PropagationMode, SELECTOR_ANNOTATIONS, SelectorAnnotation, treeLabel } from '../../core/api/index.js';
import {
  builtInExclusion,
  parseBoolAnnotation,
  parseSelect,
  parseTreeSelect,
  selectorMatches,
  shouldPropagate,
  type PropagatableObject,
} from '../../core/propagation/index.js';
import type { ExplainView, FoundObject } from '../model.js';
import { propagates, typeName } from './names.js';

type Annotations = Readonly<Record<string, string>> | undefined;

const inheritedFrom = (o: FoundObject): string | undefined => o.object?.metadata.labels?.[Label.inheritedFrom];
const isSource = (o: FoundObject): boolean => o.object !== undefined && inheritedFrom(o) === undefined;
const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);
const annotation = (annotations: Annotations, key: string): string | undefined => (annotations?.[key] ? annotations[key] : undefined);

/**
 * Why the selector annotations keep an object out of `ns`, step by step as evaluateSelectors
 * decides (docs/behaviour.md §5.4); undefined when they let it in.
 */
export function selectorReason(
  annotations: Annotations,
  labels: Readonly<Record<string, string>>,
  mode: string,
  ns: string,
): string | undefined {
  let propagate = mode === PropagationMode.Propagate;
  const unparsable = (key: string, error: string) => `its ${key} annotation does not parse, so it is propagated nowhere: ${error}`;

  const select = annotation(annotations, SelectorAnnotation.select);
  if (select !== undefined) {
    const r = parseSelect(select);
    if (!r.ok) return unparsable(SelectorAnnotation.select, r.error);
    if (r.value.requirements.length > 0) {
      if (!selectorMatches(r.value, labels)) return `${SelectorAnnotation.select} "${select}" does not match the labels of ${ns}`;
      propagate = true;
    }
  }

  const tree = annotation(annotations, SelectorAnnotation.treeSelect);
  if (tree !== undefined) {
    const r = parseTreeSelect(tree);
    if (!r.ok) return unparsable(SelectorAnnotation.treeSelect, r.error);
    if (!selectorMatches(r.value.selector, labels)) {
      const inTree = (x: string) => Object.hasOwn(labels, treeLabel(x));
      const why =
        r.value.include !== undefined && !inTree(r.value.include)
          ? `${ns} is not in the subtree of ${r.value.include}`
          : `${ns} is in the subtree of ${r.value.exclude.find(inTree) ?? '?'}, which it excludes`;
      return `${SelectorAnnotation.treeSelect} "${tree}": ${why}`;
    }
    propagate = true;
  }

  const none = annotation(annotations, SelectorAnnotation.none);
  if (none !== undefined) {
    const r = parseBoolAnnotation(SelectorAnnotation.none, none);
    if (!r.ok) return unparsable(SelectorAnnotation.none, r.error);
    if (r.value) return `${SelectorAnnotation.none} is "${none}"`;
  }

  const all = annotation(annotations, SelectorAnnotation.all);
  if (all !== undefined) {
    const r = parseBoolAnnotation(SelectorAnnotation.all, all);
    if (!r.ok) return unparsable(SelectorAnnotation.all, r.error);
    if (r.value) propagate = true;
  }

  if (!propagate) return `mode ${mode} propagates only objects with a select or treeSelect annotation, or all=true`;
  return undefined;
}

/** `(select "env=dev")`: the selector annotations an object carries, for the lines that propagate. */
function selectorsSet(annotations: Annotations): string {
  const set = SELECTOR_ANNOTATIONS.filter((k) => annotation(annotations, k) !== undefined).map(
    (k) => `${k.slice(k.indexOf('/') + 1)} "${annotations?.[k]}"`,
  );
  return set.length > 0 ? ` (${set.join(', ')})` : '';
}

interface Verdict {
  /** The source that should be in NS: its namespace. */
  winner?: string;
  lines: string[];
  /** An ancestor above the winner (or any, when none wins) could not be read. */
  uncertain: boolean;
}

function weighSources(v: ExplainView): Verdict {
  const ns = v.namespace;
  const type = { group: v.type.group, kind: v.type.kind, mode: v.type.mode as PropagationMode };
  const lines: string[] = [];
  let winner: string | undefined;
  let uncertain = false;
  for (const a of v.ancestors) {
    if (a.forbidden) {
      if (winner === undefined) uncertain = true;
      lines.push(`- ${a.namespace}: could not be read (no permission to read ${typeName(v.type)} in ${a.namespace})`);
      continue;
    }
    if (!a.object) continue;
    const from = inheritedFrom(a);
    if (from !== undefined) {
      lines.push(`- ${a.namespace}: a copy from ${from}, not a source`);
      continue;
    }
    const obj = a.object as PropagatableObject;
    const annotations = obj.metadata?.annotations;
    if (shouldPropagate(obj, v.labels, type).propagate) {
      if (winner === undefined) {
        winner = a.namespace;
        lines.push(
          `- ${a.namespace}: source, propagates to ${ns}${selectorsSet(annotations)}: it wins (the highest ancestor whose source does)`,
        );
      } else {
        lines.push(`- ${a.namespace}: source, propagates to ${ns}${selectorsSet(annotations)}, but the one in ${winner} wins (higher)`);
      }
      continue;
    }
    const reason = !propagates(v.type.mode)
      ? `mode ${v.type.mode}`
      : (selectorReason(annotations, v.labels, v.type.mode, ns) ??
        lowerFirst(builtInExclusion(obj, type) ?? 'its selector annotations keep it out'));
    lines.push(`- ${a.namespace}: source, not propagated to ${ns}: ${reason}`);
  }
  return { ...(winner !== undefined ? { winner } : {}), lines, uncertain };
}

function modeText(mode: string): string {
  if (propagates(mode)) return '';
  if (mode === PropagationMode.Remove) return ': HNC deletes every copy of this type';
  return ': HNC does not propagate this type';
}

/** The explanation, a few lines ending in a newline. */
export function explainObject(v: ExplainView): string {
  const ns = v.namespace;
  const what = `${v.type.kind} ${v.name}`;
  const weighed = weighSources(v);
  const { lines: sourceLines, uncertain } = weighed;
  const local = v.local;
  const localFrom = inheritedFrom(local);
  const halted = v.halted !== undefined;
  // A copy from an ancestor whose source could not be read: as far as can be told, that one wins.
  const unreadableFrom = localFrom !== undefined && v.ancestors.find((a) => a.namespace === localFrom)?.forbidden === true;
  const winnerAt = (n: string | undefined) => (n === undefined ? Infinity : v.ancestors.findIndex((a) => a.namespace === n));
  const winner = unreadableFrom && winnerAt(localFrom) < winnerAt(weighed.winner) ? localFrom : weighed.winner;

  let verdict: string;
  if (halted) verdict = `nothing changes while ${ns} is halted`;
  else if (!propagates(v.type.mode)) verdict = `not propagated (mode ${v.type.mode})`;
  else if (winner === undefined) verdict = 'not propagated';
  else if (local.forbidden) verdict = `should be propagated from ${winner}`;
  else if (localFrom === winner) verdict = `propagated from ${winner}${unreadableFrom ? ` (whose ${v.type.kind} could not be read)` : ''}`;
  else if (isSource(local)) verdict = `blocked: ${ns} has its own ${v.type.kind} of that name`;
  else if (localFrom !== undefined) verdict = `to be propagated from ${winner}, replacing the copy from ${localFrom}`;
  else verdict = `should be propagated from ${winner}, but ${ns} has no copy yet`;

  const out = [`${what} in namespace ${ns}: ${verdict}`, `  Type: ${typeName(v.type)} (mode ${v.type.mode})${modeText(v.type.mode)}`];
  if (v.halted) {
    out.push(`  ${ns} is halted: ${v.halted.type} (${v.halted.reason}): ${v.halted.message}`);
    out.push(`  HNC creates, updates and deletes no copies in ${ns} until that is resolved`);
  }
  if (v.ancestors.length === 0) {
    out.push(`  Ancestors: none (${ns} is a root)`);
  } else {
    out.push(`  Ancestors, highest first: ${v.ancestors.map((a) => a.namespace).join(', ')}`);
    if (sourceLines.length > 0) out.push(...sourceLines.map((l) => `  ${l}`));
    else out.push(`  No ancestor has a ${v.type.kind} named ${v.name}`);
  }
  const [first, ...more] = localText(v, winner);
  out.push(`  In ${ns}: ${first}`, ...more.map((l) => `  ${l}`));
  const notes = [...v.notes];
  if (uncertain && propagates(v.type.mode) && winner === weighed.winner)
    notes.push('some ancestors could not be read, so a source there could win instead');
  out.push(...notes.map((n) => `  (${n})`));
  return out.map((l) => `${l}\n`).join('');
}

/** What NS itself holds under that name: one line, and a second one for a blocked copy. */
function localText(v: ExplainView, winner: string | undefined): string[] {
  const ns = v.namespace;
  const local = v.local;
  if (local.forbidden) return [`could not be read (no permission to read ${typeName(v.type)} in ${ns})`];
  if (!local.object) return [`no ${v.type.kind} of that name`];
  const from = inheritedFrom(local);
  if (from === undefined) {
    const own = `its own ${v.type.kind}, not a copy (no ${Label.inheritedFrom} label)`;
    if (winner === undefined || v.halted) return [own];
    return [
      own,
      `HNC never overwrites it, so the copy from ${winner} is not made (condition ObjectConflict): rename or remove it to receive the copy`,
    ];
  }
  const copy = `a copy from ${from} (${Label.inheritedFrom}=${from})`;
  if (from === winner) return [copy];
  if (!propagates(v.type.mode) && v.type.mode !== PropagationMode.Remove) return [`${copy}, left as it is in mode ${v.type.mode}`];
  if (v.halted) return [`${copy}, kept as it is while ${ns} is halted`];
  if (winner !== undefined) return [`${copy}: HNC replaces it with the copy from ${winner}`];
  return [`${copy}, left over: HNC deletes it`];
}
