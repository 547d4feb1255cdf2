// The audit trail's writer, owned by the document store: every create, spec change and delete
// of an audited kind (model/audit-kinds.ts) gets an AuditEntry written in the same backend
// transaction as the change, so an acknowledged change always has its entry (and a change
// that failed its compare-and-swap has none). Entries are keyed by a zero-padded sequence
// number, so the store's key order is their age; past `max`, the same transaction deletes the
// oldest. Who acts comes from the async context (src/log.ts asActor): the HTTP route layer sets
// the user or token, the specs folder the file, the loop manager the loop.
import { ConflictError } from '../errors.js';
import { currentActor, currentRequestId, type Actor } from '../log.js';
import { AUDIT_MAX_FIELDS, AuditKind, changedPaths, isAudited, type AuditEntrySpec } from '../model/audit-kinds.js';
import type { Clock } from '../model/clock.js';
import { docKey, type AnyDoc } from '../model/document.js';
import { namesOf } from '../model/object-names.js';
import type { Backend, TxnOp } from './backend.js';
import type { StoredDoc } from './stored.js';

export { asActor, currentActor, type Actor } from '../log.js';

/** Who a change made outside any request or loop is recorded as. */
export const QUARRY_ACTOR: Actor = { type: 'system', name: 'quarry' };

const SEQ_DIGITS = 16;
const PREFIX = `${AuditKind.AuditEntry}/`;

export interface AuditedChange {
  action: AuditEntrySpec['action'];
  before: StoredDoc | undefined;
  after: StoredDoc | undefined;
}

export interface AuditPlan {
  ops: TxnOp<StoredDoc>[];
  /** Called when the transaction failed: the entry was not written, the oldest not dropped. */
  undo(): void;
}

export class AuditTrail {
  /** Entry ids, oldest first; loaded from the store on first use. */
  private ids: string[] | null = null;
  private loading: Promise<void> | null = null;
  private seq = 0;
  /** The audited write in flight, when the backend may commit writes out of order. */
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly backend: Backend<StoredDoc>,
    private readonly clock: Clock,
    readonly max: number,
  ) {}

  /**
   * Runs an audited write: plan() and the transaction's submission. A plan drops the oldest
   * entries, perhaps ones whose own writes are still in flight; with `ifExists` a drop that
   * lands first is skipped and the entry it meant stays for good. So on a backend that may
   * commit out of submission order (etcd) audited writes go one at a time; on the others `write`
   * runs at once, with nothing awaited before its plan.
   */
  inOrder<T>(write: () => Promise<T>): Promise<T> {
    if (this.backend.commitsInOrder) return write();
    const run = this.tail.then(write, write);
    this.tail = run.catch(() => undefined);
    return run;
  }

  audited(kind: string): boolean {
    return this.max > 0 && isAudited(kind);
  }

  /** Before the first plan(): learns which entries exist. */
  ready(): Promise<void> {
    if (this.ids) return Promise.resolve();
    return (this.loading ??= this.backend.list(PREFIX).then(({ items }) => {
      this.ids ??= items.map((kv) => kv.key.slice(PREFIX.length));
      const last = this.ids[this.ids.length - 1];
      this.seq = Math.max(this.seq, last === undefined ? 0 : Number(last));
    }));
  }

  /** Whether a refused transaction was refused for its entry's number: another controller on the
   * same store (etcd) took it first. Sequence numbers are each writer's own guess; the store's
   * compare is what makes them unique. */
  collided(err: unknown): boolean {
    return err instanceof ConflictError && err.message.startsWith(PREFIX);
  }

  /** Learns the entries the other writers added, so the next number is past theirs. */
  async resync(): Promise<void> {
    const { items } = await this.backend.list(PREFIX);
    this.ids = items.map((kv) => kv.key.slice(PREFIX.length));
    const last = this.ids[this.ids.length - 1];
    this.seq = Math.max(this.seq, last === undefined ? 0 : Number(last));
  }

  /** The writes that record `change`, to go in its transaction; synchronous, so concurrent
   * writers never pick the same number or drop the same entry twice. */
  plan(change: AuditedChange): AuditPlan {
    const ids = this.ids;
    if (!ids) throw new Error('AuditTrail.plan before ready()');
    const doc = (change.after ?? change.before) as StoredDoc;
    const fields = change.action === 'delete' ? [] : changedPaths(change.before?.spec ?? {}, change.after?.spec ?? {});
    const id = String(++this.seq).padStart(SEQ_DIGITS, '0');
    const spec: AuditEntrySpec = {
      at: this.clock.iso(),
      actor: currentActor() ?? QUARRY_ACTOR,
      action: change.action,
      kind: doc.kind,
      objectId: doc.id,
      objectName: doc.name,
      names: namesOf(doc as unknown as AnyDoc) as Record<string, string>,
      generationBefore: change.before?.metadata.generation ?? null,
      generationAfter: change.after?.metadata.generation ?? null,
      changedFields: fields.slice(0, AUDIT_MAX_FIELDS),
      changedFieldCount: fields.length,
      requestId: currentRequestId(),
    };
    const now = spec.at;
    const entry: StoredDoc = {
      kind: AuditKind.AuditEntry,
      id,
      name: `${spec.action} ${spec.kind} ${spec.objectName}`,
      metadata: { generation: 1, createdAt: now, updatedAt: now, labels: {}, source: null },
      spec,
      status: {},
    };
    ids.push(id);
    const dropped = ids.length > this.max ? ids.splice(0, ids.length - this.max) : [];
    const ops: TxnOp<StoredDoc>[] = [
      { op: 'put', key: docKey(AuditKind.AuditEntry, id), value: entry, pre: { modRevision: 0 } },
      ...dropped.map((old) => ({ op: 'del' as const, key: docKey(AuditKind.AuditEntry, old), ifExists: true as const })),
    ];
    return {
      ops,
      undo: () => {
        const at = ids.indexOf(id);
        if (at >= 0) ids.splice(at, 1);
        ids.unshift(...dropped);
      },
    };
  }
}
