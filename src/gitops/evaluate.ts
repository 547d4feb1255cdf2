// One file's text → errors, or the changes and task runs applying it would make. The same
// function serves POST /specs/plan (a dry run) and the apply, so they cannot disagree.
import type { AnyDoc } from '../model/document.js';
import { SpecKind } from '../model/spec-inputs.js';
import { DEFAULT_LIMITS, parseSpecText, type specValidators, type SpecError, type SpecLimits } from './parse.js';
import { DISRUPTION_NOTE, plannedDisruptions, type PlannedDisruption } from './disruptions.js';
import { planChanges } from './plan.js';
import { resolveFile } from './resolve.js';
import { plannedTasks, withPoolUsage, withUsage, type OsdUsage, type PlannedTask, type PoolUsage } from './tasks.js';
import type { Change, Pending } from './types.js';
import { allDocs, fileSource, type World } from './world.js';

export interface Evaluation {
  file: string;
  documents: number;
  errors: SpecError[];
  changes: Change[];
  pending: Pending[];
  tasks: PlannedTask[];
  /** The nodes it restarts or shuts down, wave by wave in the budget's order. */
  disruptions: PlannedDisruption[];
}

export interface ChangeView {
  kind: string;
  id: string;
  name: string;
  document: number | null;
  fields: string[];
  reason?: string;
}

export interface PlanView {
  file: string;
  valid: boolean;
  errors: SpecError[];
  created: ChangeView[];
  updated: ChangeView[];
  pruned: ChangeView[];
  orphaned: ChangeView[];
  pending: Pending[];
  tasks: PlannedTask[];
  disruptions: PlannedDisruption[];
  /** With disruptions: that Ceph's ok-to-stop is asked at the time. */
  disruptionNote?: string;
}

type Validators = ReturnType<typeof specValidators>;

/** `text` null: the file is gone, and everything it owned is pruned or orphaned. `isLive`
 * says whether another file that owns an object still exists (a renamed file's objects pass
 * to the new name). `usage`: what is on each OSD, for the tasks that affect one; it never
 * fails (an empty map when Ceph does not answer); `poolUsage` the same for pools, for a
 * filesystem's deletion. */
export async function evaluate(
  file: string,
  text: string | null,
  load: (catalog: boolean) => Promise<World>,
  v: Validators,
  isLive: (file: string) => boolean,
  limits: SpecLimits = DEFAULT_LIMITS,
  usage: () => Promise<OsdUsage> = () => Promise.resolve(new Map()),
  poolUsage: () => Promise<PoolUsage> = () => Promise.resolve(new Map()),
): Promise<Evaluation> {
  const parsed = text === null ? { docs: [], errors: [] } : parseSpecText(file, text, v, limits);
  const empty = { file, documents: parsed.docs.length, changes: [], pending: [], tasks: [], disruptions: [] };
  if (parsed.errors.length) return { ...empty, errors: parsed.errors };
  const world = await load(parsed.docs.some((d) => d.kind === SpecKind.Image || (d.kind === SpecKind.Node && d.spec.image !== null)));
  const res = resolveFile(file, parsed.docs, world, isLive);
  if (res.errors.length) return { ...empty, errors: res.errors };
  const changes = planChanges(file, res, world);
  const planned = plannedTasks(changes, world);
  // Ceph is asked what is on the OSDs only when a task affects one.
  const osds = planned.some((x) => x.affects) ? withUsage(planned, await usage()) : planned;
  // ... and what is in the pools only when a filesystem's deletion destroys some.
  const tasks = osds.some((x) => x.pools) ? withPoolUsage(osds, await poolUsage()) : osds;
  const disruptions = plannedDisruptions(changes, world);
  return { file, documents: parsed.docs.length, errors: [], changes, pending: res.pending, tasks, disruptions };
}

const view = (c: Change): ChangeView => ({
  kind: c.kind,
  id: c.id,
  name: c.name,
  document: c.document,
  fields: c.fields,
  ...(c.reason ? { reason: c.reason } : {}),
});
const isPrune = (c: Change): boolean => c.action === 'delete' || (c.action === 'update' && c.document === null);

export function planView(e: Evaluation): PlanView {
  return {
    file: e.file,
    valid: e.errors.length === 0,
    errors: e.errors,
    created: e.changes.filter((c) => c.action === 'create').map(view),
    updated: e.changes.filter((c) => c.action === 'update' && !isPrune(c)).map(view),
    pruned: e.changes.filter(isPrune).map(view),
    orphaned: e.changes.filter((c) => c.action === 'orphan').map(view),
    pending: e.pending,
    tasks: e.tasks,
    disruptions: e.disruptions,
    ...(e.disruptions.length ? { disruptionNote: DISRUPTION_NOTE } : {}),
  };
}

/** The objects a file owns, and those it left orphaned, as the world shows them. */
export function ownedObjects(world: World, file: string): { owned: AnyDoc[]; orphans: AnyDoc[] } {
  const mine = allDocs(world).filter((d) => fileSource(d.metadata.source) && d.metadata.source.file === file);
  return { owned: mine.filter((d) => !d.metadata.source?.orphaned), orphans: mine.filter((d) => d.metadata.source?.orphaned) };
}
