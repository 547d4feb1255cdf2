// Which queue keys a store change wakes, and the dependency report over registered loops. Pure
// functions over the loop list, so the manager stays about lifecycle and the rules stay testable.
import type { AnyDoc } from '../model/document.js';
import type { Reconciler } from './types.js';

// Loops of any observed and planned types; the manager never looks inside them. (Method
// parameters are bivariant, so every Reconciler<O, P> is assignable to this.)
export type AnyReconciler = Reconciler;

export interface LoopDescription {
  name: string;
  kind: string;
  /** Kinds whose changes wake ids of this loop, besides its own kind. */
  watches: string[];
  dependsOn: string[];
}

export const TASK_RUN_KIND = 'TaskRun';

/** Loop names never contain '/', ids may: the key splits at the first slash. */
export const loopKey = (loop: string, id: string): string => `${loop}/${id}`;

export function parseKey(key: string): { loop: string; id: string } | undefined {
  const at = key.indexOf('/');
  if (at <= 0 || at === key.length - 1) return undefined;
  return { loop: key.slice(0, at), id: key.slice(at + 1) };
}

export function describeLoops(loops: Iterable<AnyReconciler>): LoopDescription[] {
  return [...loops].map((l) => ({
    name: l.name,
    kind: l.kind,
    watches: (l.watches ?? []).map((w) => w.kind),
    dependsOn: [...(l.dependsOn ?? [])],
  }));
}

/** Names of the loops a change to a document of `kind` wakes (its own loops and watchers). */
export function loopsFor(loops: Iterable<AnyReconciler>, kind: string): string[] {
  return [...loops].filter((l) => l.kind === kind || (l.watches ?? []).some((w) => w.kind === kind)).map((l) => l.name);
}

/**
 * Every key a change to `doc` wakes: the doc's own id in loops of its kind, whatever watch
 * mappings return, and for a task run, its target in the target kind's loops — so a loop
 * waiting on a run it started looks again when the run moves. A throwing map is reported and
 * skipped: one bad mapping must not silence the others.
 */
export function keysForDoc(
  loops: Iterable<AnyReconciler>,
  doc: AnyDoc,
  onMapError: (loop: string, err: unknown) => void,
  /** false only when the change is known to leave the spec as it was (StoreEvent.specChanged). */
  specChanged = true,
): string[] {
  const keys = new Set<string>();
  const target = taskRunTarget(doc);
  for (const loop of loops) {
    if (loop.kind === doc.kind && (specChanged || loop.wakesOn !== 'spec')) keys.add(loopKey(loop.name, doc.id));
    if (target && loop.kind === target.kind) keys.add(loopKey(loop.name, target.id));
    for (const w of loop.watches ?? []) {
      if (w.kind !== doc.kind) continue;
      try {
        for (const id of w.map(doc)) keys.add(loopKey(loop.name, id));
      } catch (err) {
        onMapError(loop.name, err);
      }
    }
  }
  return [...keys];
}

function taskRunTarget(doc: AnyDoc): { kind: string; id: string } | undefined {
  if (doc.kind !== TASK_RUN_KIND || typeof doc.spec !== 'object' || doc.spec === null) return undefined;
  const spec = doc.spec as { targetKind?: unknown; targetId?: unknown };
  if (typeof spec.targetKind !== 'string' || typeof spec.targetId !== 'string') return undefined;
  return { kind: spec.targetKind, id: spec.targetId };
}

/** Throws when a loop depends on a loop that is not registered, or the dependencies loop. */
export function checkDependencies(loops: Iterable<AnyReconciler>): void {
  const byName = new Map([...loops].map((l) => [l.name, l] as const));
  for (const loop of byName.values()) {
    for (const dep of loop.dependsOn ?? []) {
      if (!byName.has(dep)) {
        const known = [...byName.keys()].join(', ') || 'none';
        throw new Error(`loop "${loop.name}" depends on "${dep}", which is not registered (registered: ${known})`);
      }
    }
  }
  const cycle = findCycle(byName);
  if (cycle) throw new Error(`loop dependencies form a cycle: ${cycle.join(' → ')}`);
}

function findCycle(byName: Map<string, AnyReconciler>): string[] | undefined {
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (name: string): string[] | undefined => {
    const at = path.indexOf(name);
    if (at >= 0) return [...path.slice(at), name];
    if (done.has(name)) return undefined;
    path.push(name);
    for (const dep of byName.get(name)?.dependsOn ?? []) {
      const found = visit(dep);
      if (found) return found;
    }
    path.pop();
    done.add(name);
    return undefined;
  };
  for (const name of byName.keys()) {
    const found = visit(name);
    if (found) return found;
  }
  return undefined;
}
