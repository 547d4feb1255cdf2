// Versioned documents over any Backend: validation, generation bumps on spec changes, CAS on
// resourceVersion (the key's modRevision), skipped no-op writes, and a typed change feed.
import { isDeepStrictEqual } from 'node:util';
import { ConflictError, InputError, NotFoundError } from '../errors.js';
import { systemClock, uuid, type Clock, type IdGen } from '../model/clock.js';
import { docKey, keyKind, type AnyDoc, type Doc } from '../model/document.js';
import { DocValidator } from '../model/validate.js';
import { currentRequestId } from '../log.js';
import { AuditTrail, type AuditedChange } from './audit.js';
import { isAudited } from '../model/audit-kinds.js';
import type { Backend, KeyValue, TxnOp, WatchEvent } from './backend.js';
import {
  STATUS_BATCH_MAX,
  type CreateInput,
  type SpecWriteOptions,
  type StatusBatchWrite,
  type StatusWriteOptions,
  type Store,
  type StoreEvent,
} from './types.js';
import { clean, frozen, stale, storedToDoc, validLabels, validName, type StoredDoc } from './stored.js';

export interface DocumentStoreOptions {
  clock?: Clock;
  ids?: IdGen;
  validator?: DocValidator;
  /** Attempts of the retrying read-modify-write paths before a ConflictError escapes. */
  maxAttempts?: number;
  /** Audit entries kept (AUDIT_MAX_ENTRIES); absent or 0: no audit trail. The composition root
   * (src/main.ts) turns it on; a store made for a test or a tool keeps one write per write. */
  auditMaxEntries?: number;
}

// Compiling every schema takes ajv ~100 ms; stores that bring no validator share one, which is
// immutable once built.
let sharedValidator: DocValidator | undefined;
const defaultValidator = (): DocValidator => (sharedValidator ??= new DocValidator());

const isConflict = (err: unknown): err is ConflictError => err instanceof ConflictError && err.code === 'CONFLICT';

export class DocumentStore implements Store {
  private readonly clock: Clock;
  private readonly ids: IdGen;
  private readonly validator: DocValidator;
  private readonly maxAttempts: number;
  private readonly audit: AuditTrail;

  constructor(
    private readonly backend: Backend<StoredDoc>,
    opts: DocumentStoreOptions = {},
  ) {
    this.clock = opts.clock ?? systemClock;
    this.ids = opts.ids ?? uuid;
    this.validator = opts.validator ?? defaultValidator();
    this.maxAttempts = opts.maxAttempts ?? 10;
    this.audit = new AuditTrail(backend, this.clock, opts.auditMaxEntries ?? 0);
  }

  open(): Promise<void> {
    return this.backend.open();
  }

  close(): Promise<void> {
    return this.backend.close();
  }

  revision(): number {
    return this.backend.revision();
  }

  async get<S = unknown, T = unknown>(kind: string, id: string): Promise<Doc<S, T> | undefined> {
    const kv = await this.backend.get(docKey(kind, id));
    return kv && (storedToDoc(kv.value, kv.modRevision) as Doc<S, T>);
  }

  async mustGet<S = unknown, T = unknown>(kind: string, id: string): Promise<Doc<S, T>> {
    const kv = await this.current(kind, id);
    return storedToDoc(kv.value, kv.modRevision) as Doc<S, T>;
  }

  async list<S = unknown, T = unknown>(kind: string): Promise<Doc<S, T>[]> {
    const { items } = await this.backend.list(`${kind}/`);
    return items.map((kv) => storedToDoc(kv.value, kv.modRevision) as Doc<S, T>);
  }

  async create<S>(input: CreateInput<S>): Promise<Doc<S>> {
    const stored = this.newStored(input);
    const id = stored.id;
    let rev: number;
    try {
      rev = await this.write({ op: 'put', key: docKey(input.kind, id), value: stored, pre: { modRevision: 0 } }, (audited) =>
        audited ? { action: 'create', before: undefined, after: stored } : null,
      );
    } catch (err) {
      if (isConflict(err)) throw new ConflictError(`${input.kind} ${id} already exists`);
      throw err;
    }
    return storedToDoc(stored, rev) as Doc<S>;
  }

  /** The stored form of a new document, checked. */
  private newStored(input: CreateInput<unknown>): StoredDoc {
    const id = input.id ?? this.ids();
    if (typeof id !== 'string' || id === '')
      throw new InputError('id must be a non-empty string', [{ path: '/id', message: 'must be a non-empty string' }]);
    const spec = this.checked(input.kind, 'spec', input.spec);
    const status = input.status === undefined ? {} : this.checked(input.kind, 'status', input.status);
    const now = this.clock.iso();
    return {
      kind: input.kind,
      id,
      name: validName(input.name),
      metadata: {
        generation: 1,
        createdAt: now,
        updatedAt: now,
        labels: validLabels(input.labels ?? {}),
        source: clean(input.source ?? null, '/metadata/source'),
        ...requestIdNow(),
      },
      spec,
      status,
    };
  }

  async writeStatuses(writes: StatusBatchWrite[]): Promise<AnyDoc[]> {
    if (writes.length > STATUS_BATCH_MAX) throw new Error(`a status batch of ${writes.length} writes: at most ${STATUS_BATCH_MAX}`);
    if (writes.length === 0) return [];
    const docs: StoredDoc[] = [];
    const ops: TxnOp<StoredDoc>[] = [];
    for (const w of writes) {
      const kind = 'create' in w ? w.create.kind : w.base.kind;
      // The batch has no audit entries: only bookkeeping kinds may take this path, audit trail on
      // or not (a test's store has none), so a kind that would be audited never learns to.
      if (isAudited(kind)) throw new Error(`${kind} is audited: it cannot be written in a status batch`);
      let next: StoredDoc;
      let pre: number;
      if ('create' in w) {
        next = this.newStored(w.create);
        pre = 0;
      } else {
        const { resourceVersion, ...metadata } = w.base.metadata;
        const status = this.checked(kind, 'status', w.status);
        next = {
          kind,
          id: w.base.id,
          name: w.base.name,
          metadata: { ...metadata, updatedAt: this.clock.iso() },
          spec: w.base.spec,
          status,
        };
        pre = resourceVersion;
      }
      docs.push(next);
      ops.push({ op: 'put', key: docKey(kind, next.id), value: next, pre: { modRevision: pre } });
    }
    const revs = await this.backend.txn(ops);
    return docs.map((d, i) => storedToDoc(d, revs[i] as number));
  }

  async updateSpec<S>(kind: string, id: string, specIn: S, opts: SpecWriteOptions): Promise<Doc<S>> {
    const spec = this.checked(kind, 'spec', specIn);
    const name = opts.name === undefined ? undefined : validName(opts.name);
    const labels = opts.labels === undefined ? undefined : validLabels(opts.labels);
    const source = opts.source === undefined ? undefined : clean(opts.source, '/metadata/source');
    const cur = await this.current(kind, id, opts.resourceVersion);
    if (cur.modRevision !== opts.resourceVersion) throw stale(kind, id, opts.resourceVersion, cur.modRevision);
    const old = cur.value;
    const next: StoredDoc = {
      ...old,
      name: name ?? old.name,
      metadata: { ...old.metadata, labels: labels ?? old.metadata.labels, source: source === undefined ? old.metadata.source : source },
      spec,
    };
    const specChanged = !isDeepStrictEqual(spec, old.spec);
    if (!specChanged && next.name === old.name && isDeepStrictEqual(next.metadata, old.metadata)) {
      return storedToDoc(old, cur.modRevision) as Doc<S>;
    }
    if (specChanged) {
      // The request that wrote this generation, or nobody's (a file, a loop): never an older one's.
      const { requestId: _previous, ...rest } = next.metadata;
      next.metadata = { ...rest, ...requestIdNow(), generation: rest.generation + 1 };
    }
    next.metadata.updatedAt = this.clock.iso();
    // Only a spec change is a desired-state change: a name, label or source of its own is not.
    const rev = await this.write({ op: 'put', key: docKey(kind, id), value: next, pre: { modRevision: cur.modRevision } }, (audited) =>
      audited && specChanged ? { action: 'update', before: old, after: next } : null,
    );
    return storedToDoc(next, rev) as Doc<S>;
  }

  async mutateSpec<S>(kind: string, id: string, mutate: (doc: Doc<S>) => S | undefined): Promise<Doc<S>> {
    for (let attempt = 1; ; attempt++) {
      const doc = await this.mustGet<S, Record<string, unknown>>(kind, id);
      const spec = mutate(doc);
      if (spec === undefined) return doc;
      try {
        return await this.updateSpec(kind, id, spec, { resourceVersion: doc.metadata.resourceVersion });
      } catch (err) {
        if (!isConflict(err)) throw err;
        if (attempt >= this.maxAttempts)
          throw new ConflictError(`${kind} ${id} kept changing: gave up after ${attempt} attempts (${err.message})`);
      }
    }
  }

  async updateStatus(kind: string, id: string, statusIn: unknown, opts: StatusWriteOptions = {}): Promise<AnyDoc> {
    const status = this.checked(kind, 'status', statusIn);
    for (let attempt = 1; ; attempt++) {
      const cur = await this.current(kind, id, opts.resourceVersion);
      // Equality first: an unchanged status must never wake a watcher, even from a stale caller.
      if (isDeepStrictEqual(status, cur.value.status)) return storedToDoc(cur.value, cur.modRevision);
      const expected = opts.resourceVersion ?? cur.modRevision;
      if (cur.modRevision !== expected) throw stale(kind, id, expected, cur.modRevision);
      const next: StoredDoc = { ...cur.value, metadata: { ...cur.value.metadata, updatedAt: this.clock.iso() }, status };
      try {
        const rev = await this.backend.put(docKey(kind, id), next, { modRevision: expected });
        return storedToDoc(next, rev);
      } catch (err) {
        // Without a resourceVersion the caller asked for "over whatever spec is current":
        // re-read and retry, so a spec write that slipped in between is kept.
        if (opts.resourceVersion !== undefined || !isConflict(err) || attempt >= this.maxAttempts) throw err;
      }
    }
  }

  async delete(kind: string, id: string, opts: { resourceVersion?: number } = {}): Promise<void> {
    const rv = opts.resourceVersion;
    const cur = await this.current(kind, id, rv);
    if (rv !== undefined && cur.modRevision !== rv) throw stale(kind, id, rv, cur.modRevision);
    await this.write({ op: 'del', key: docKey(kind, id), ...(rv === undefined ? {} : { pre: { modRevision: rv } }) }, (audited) =>
      audited ? { action: 'delete', before: cur.value, after: undefined } : null,
    );
  }

  watch(fromRevision: number, handler: (event: StoreEvent) => void): () => void {
    return this.backend.watch(fromRevision, (event) => {
      if (event.type === 'relist') handler({ type: 'relist', revision: event.revision });
      else handler(toStoreEvent(event));
    });
  }

  /**
   * One document write, with its audit entry when `change` names one (for an audited kind): both
   * in one backend transaction, so the entry exists exactly when the change does. Resolves
   * with the document's new revision.
   */
  private async write(op: TxnOp<StoredDoc>, change: (audited: boolean) => AuditedChange | null): Promise<number> {
    const kind = op.op === 'put' ? op.value.kind : keyKind(op.key);
    const audited = this.audit.audited(kind) ? change(true) : null;
    if (!audited) return op.op === 'put' ? this.backend.put(op.key, op.value, op.pre) : this.backend.delete(op.key, op.pre);
    await this.audit.ready();
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.audit.inOrder(async () => {
          // Nothing awaited from here to the transaction's submission: the plan stays true.
          const plan = this.audit.plan(audited);
          try {
            const [rev] = await this.backend.txn([op, ...plan.ops]);
            return rev as number;
          } catch (err) {
            plan.undo();
            throw err;
          }
        });
      } catch (err) {
        // Another controller numbered an entry the same: the change itself was not refused.
        if (attempt >= this.maxAttempts || !this.audit.collided(err)) throw err;
        await this.audit.resync();
      }
    }
  }

  /** `atLeast`: the caller's resourceVersion, which the read must reflect (backend.get). */
  private async current(kind: string, id: string, atLeast?: number): Promise<KeyValue<StoredDoc>> {
    const kv = await this.backend.get(docKey(kind, id), atLeast);
    if (!kv) throw new NotFoundError(`${kind} ${id} not found`);
    return kv;
  }

  /** A JSON-normal deep copy that passed the kind's schema. */
  private checked(kind: string, part: 'spec' | 'status', value: unknown): unknown {
    const copy = clean(value, `/${part}`);
    this.validator.check(kind, part, copy);
    return frozen(copy);
  }
}

function toStoreEvent(event: WatchEvent<StoredDoc>): StoreEvent {
  const doc = storedToDoc(event.value, event.revision);
  if (event.type === 'delete') return { type: 'deleted', doc, revision: event.revision, specChanged: true };
  if (event.createRevision === event.revision) return { type: 'added', doc, revision: event.revision, specChanged: true };
  // Without the previous value (an event caught up on from the history) the spec may have moved.
  const prev = event.prevValue;
  const specChanged = prev === undefined || prev.metadata.generation !== event.value.metadata.generation;
  return { type: 'modified', doc, revision: event.revision, specChanged };
}

/** The metadata member naming the HTTP request being handled, if any (src/log.ts). */
function requestIdNow(): { requestId?: string } {
  const requestId = currentRequestId();
  return requestId === null ? {} : { requestId };
}
