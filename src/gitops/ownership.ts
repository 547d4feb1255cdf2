// The folder owns what its files declare: a spec write by anyone else (the API, an operation)
// that changes a field a file owns is refused with 409 SPEC_OWNED naming the file. One guard
// around the store, so no route has to remember it; the folder itself writes through the
// unguarded store.
import { isDeepStrictEqual } from 'node:util';
import { ConflictError } from '../errors.js';
import type { AnyDoc } from '../model/document.js';
import type { Store } from '../store/types.js';
import { fileSource } from './world.js';

export const SPEC_OWNED = 'SPEC_OWNED';

/** The owned fields `next` changes, with the file that owns them; null when none. */
export function ownedChange(doc: AnyDoc, next: unknown): { file: string; document: number; fields: string[] } | null {
  const s = doc.metadata.source;
  if (!fileSource(s) || s.orphaned) return null;
  const was = (doc.spec ?? {}) as Record<string, unknown>;
  const now = (next ?? {}) as Record<string, unknown>;
  const fields = (s.fields ?? Object.keys(was)).filter((f) => !isDeepStrictEqual(was[f], now[f]));
  return fields.length ? { file: s.file, document: s.document ?? 0, fields } : null;
}

function refuse(doc: AnyDoc, o: { file: string; document: number; fields: string[] }): never {
  throw new ConflictError(
    `${doc.kind} ${doc.name}: ${o.fields.join(', ')} ${o.fields.length > 1 ? 'are' : 'is'} owned by the specs file ${o.file} (document ${o.document}); change the file instead`,
    SPEC_OWNED,
  );
}

export function guardOwnership(store: Store): Store {
  const check = async (kind: string, id: string, next: unknown, deleting = false): Promise<void> => {
    const doc = await store.get(kind, id);
    if (!doc) return;
    // A file's `state: absent` of a filesystem or an RGW user marks it (spec.absent): its loop
    // deletes it once an operator said "yes" (or nothing of it is in Ceph). The file asked.
    if (deleting && (doc.spec as { absent?: boolean } | null)?.absent === true) return;
    const o = deleting ? ownedChange(doc, undefined) : ownedChange(doc, next);
    if (o) refuse(doc, o);
  };
  return {
    open: () => store.open(),
    close: () => store.close(),
    revision: () => store.revision(),
    get: (kind, id) => store.get(kind, id),
    mustGet: (kind, id) => store.mustGet(kind, id),
    list: (kind) => store.list(kind),
    create: (input) => store.create(input),
    updateStatus: (kind, id, status, opts) => store.updateStatus(kind, id, status, opts),
    // Statuses only: no file owns them.
    writeStatuses: (writes) => store.writeStatuses(writes),
    watch: (from, handler) => store.watch(from, handler),
    async updateSpec(kind, id, spec, opts) {
      await check(kind, id, spec);
      return store.updateSpec(kind, id, spec, opts);
    },
    mutateSpec(kind, id, mutate) {
      return store.mutateSpec(kind, id, (doc) => {
        const next = mutate(doc);
        const o = next === undefined ? null : ownedChange(doc, next);
        if (o) refuse(doc, o);
        return next;
      });
    },
    async delete(kind, id, opts) {
      await check(kind, id, undefined, true);
      return store.delete(kind, id, opts);
    },
  };
}
