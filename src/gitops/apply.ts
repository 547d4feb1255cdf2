// Applying a file's changes: each write is CAS on the version the plan was made from, and when
// one fails (the API or a loop wrote in between), what this apply already wrote is undone, so a
// file is applied whole or not at all.
import type { Source } from '../model/document.js';
import type { Store } from '../store/types.js';
import type { Change } from './types.js';

type Undo = () => Promise<unknown>;

async function write(store: Store, c: Change): Promise<Undo> {
  const { kind, id } = c;
  if (c.action === 'create') {
    const a = c.after!;
    const doc = await store.create({
      kind,
      id,
      name: c.name,
      spec: a.spec,
      status: a.status,
      labels: a.labels,
      source: a.source as Source | null,
    });
    return () => store.delete(kind, id, { resourceVersion: doc.metadata.resourceVersion });
  }
  const b = c.before!;
  if (c.action === 'delete') {
    await store.delete(kind, id, { resourceVersion: b.resourceVersion });
    return () =>
      store.create({ kind, id, name: b.name, spec: b.spec, status: b.status, labels: b.labels, source: b.source as Source | null });
  }
  const a = c.after!;
  const doc = await store.updateSpec(kind, id, a.spec, {
    resourceVersion: b.resourceVersion,
    source: a.source as Source | null,
    labels: a.labels,
  });
  return () =>
    store.updateSpec(kind, id, b.spec, {
      resourceVersion: doc.metadata.resourceVersion,
      source: b.source as Source | null,
      labels: b.labels,
    });
}

/** Writes every change in order; on a failure, undoes the writes made and rethrows. Undo
 * failures (someone wrote over this apply's write meanwhile) are returned for the report. */
export async function applyChanges(store: Store, changes: Change[]): Promise<void> {
  const undo: Undo[] = [];
  try {
    for (const c of changes) undo.push(await write(store, c));
  } catch (err) {
    const failed: string[] = [];
    for (const u of undo.reverse()) await u().catch((e: unknown) => failed.push(String(e)));
    if (failed.length) (err as Error).message += ` (and ${failed.length} of this apply's writes could not be undone: ${failed.join('; ')})`;
    throw err;
  }
}
