// The watched specs folder as Quarry holds it: the text of every file, one apply at a time,
// each file's state, and re-applies when the world a file waits on changes (a node boots, a
// disk is reported). Reads and writes go through the unguarded store: the folder is the owner.
import { ConflictError } from '../errors.js';
import { asActor } from '../store/audit.js';
import type { Store, StoreEvent } from '../store/types.js';
import { applyChanges } from './apply.js';
import { evaluate, ownedObjects, planView, type PlanView } from './evaluate.js';
import { DEFAULT_LIMITS, specValidators, type SpecError, type SpecLimits } from './parse.js';
import type { OsdUsage, PoolUsage } from './tasks.js';
import { Rechecks, trackPending, type PendingTrack } from './pending.js';
import type { Pending } from './types.js';
import { OWNED_KINDS, allDocs, fileSource, loadWorld, type World, type WorldSources } from './world.js';

export interface ObjectRef {
  kind: string;
  id: string;
  name: string;
  document: number | null;
}

export interface FileStatus {
  file: string;
  state: 'applied' | 'pending' | 'failed' | 'deleted';
  documents: number;
  appliedAt: string | null;
  lastError: { message: string; errors: SpecError[] } | null;
  objects: ObjectRef[];
  pending: Pending[];
  orphans: Array<ObjectRef & { condition: { type: 'Orphaned'; status: 'True'; reason: string; message: string } }>;
}

export interface SpecsFolderOptions {
  store: Store;
  sources: WorldSources;
  publish: (type: string, payload: unknown) => void;
  now?: () => string;
  limits?: SpecLimits;
  /** Conflicting writes retried before an apply is reported failed. */
  attempts?: number;
  /** Ceph's `osd df` (CephApi.osdDf): bytes and PGs on the OSDs a plan removes. Absent, or no
   * answer within osdDfTimeoutMs: plans say the OSD without them. */
  osdDf?: () => Promise<ReadonlyArray<{ id: number; pgs: number; dataBytes: number }>>;
  osdDfTimeoutMs?: number;
  /** A node a file declares that no machine matches this long is `NotSeen` (NODE_UNSEEN_GRACE_MS). */
  unseenGraceMs?: number;
  /** Ceph's `df` pools (CephApi.df): objects and bytes in the pools a filesystem's deletion
   * destroys, within osdDfTimeoutMs too; else the plan names the pools alone. */
  poolDf?: () => Promise<ReadonlyArray<{ name: string; objects: number; storedBytes: number }>>;
}

/** NODE_UNSEEN_GRACE_MS's default: a machine boots and reports within a few minutes. */
export const NODE_UNSEEN_GRACE_MS = 300_000;

/** A plan waits this long for Ceph to say what is on its OSDs, then goes without. */
export const OSD_DF_TIMEOUT_MS = 2_000;

export class SpecsFolder {
  private readonly texts = new Map<string, string | null>();
  private readonly states = new Map<string, FileStatus>();
  private readonly v = specValidators();
  private queue: Promise<unknown> = Promise.resolve();
  private unwatch: (() => void) | null = null;
  private pendingReapply: NodeJS.Timeout | null = null;
  private scanned = false;
  /** Each file's pending entries with since when (src/gitops/pending.ts). */
  private readonly tracks = new Map<string, PendingTrack>();
  /** A file is applied again when a node it declares passes the unseen grace. */
  private readonly rechecks = new Rechecks(
    () => Date.parse(this.now()),
    (file) => typeof this.texts.get(file) === 'string' && void this.serially(() => this.apply(file)),
  );
  /** Since when a refused file has been refused, for the event that says it applies again. */
  private readonly failedSince = new Map<string, string>();
  /** Callers of whenApplied, by file. */
  private readonly waiters = new Map<string, Set<{ text: string | null; resolve: (s: FileStatus | null) => void }>>();

  private readonly load: (catalog: boolean) => Promise<World>;

  constructor(private readonly opts: SpecsFolderOptions) {
    this.load = (catalog) => loadWorld(opts.store, opts.sources, catalog);
  }

  /** Re-applies files that wait on the world (nodes, disks) when it changes. */
  start(): void {
    const kinds = new Set<string>(OWNED_KINDS);
    this.unwatch = this.opts.store.watch(this.opts.store.revision(), (e: StoreEvent) => {
      if (e.type === 'relist' || kinds.has(e.doc.kind)) this.soon();
    });
  }

  stop(): Promise<unknown> {
    this.unwatch?.();
    if (this.pendingReapply) clearTimeout(this.pendingReapply);
    this.rechecks.stop();
    return this.queue;
  }

  /** A file was added or changed (text) or removed (null). Resolves once it is applied; until
   * the first scan is over (ready), files are only read, so ownership is judged knowing them all. */
  async fileChanged(file: string, text: string | null): Promise<FileStatus | null> {
    this.texts.set(file, text);
    const status = this.scanned ? await this.serially(() => this.apply(file)) : null;
    if (status) this.settle(file, text, status);
    return status;
  }

  /** Resolves with the file's status once the folder has applied exactly this text (null: its
   * removal) as read from the folder, or with null after timeoutMs. PUT /specs/files writes
   * the file and waits here, so its answer says what the folder itself did with it. */
  whenApplied(file: string, text: string | null, timeoutMs: number): Promise<FileStatus | null> {
    return new Promise((resolve) => {
      const waiter = {
        text,
        resolve: (s: FileStatus | null) => {
          clearTimeout(timer);
          resolve(s);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.get(file)?.delete(waiter);
        resolve(null);
      }, timeoutMs);
      timer.unref();
      const set = this.waiters.get(file) ?? new Set();
      set.add(waiter);
      this.waiters.set(file, set);
    });
  }

  private settle(file: string, text: string | null, status: FileStatus): void {
    const set = this.waiters.get(file);
    for (const w of set ?? []) {
      if (w.text !== text) continue;
      set?.delete(w);
      w.resolve(status);
    }
    if (set?.size === 0) this.waiters.delete(file);
  }

  /** The first scan is over: apply every file, then prune what files gone meanwhile owned. */
  async ready(): Promise<void> {
    this.scanned = true;
    for (const file of [...this.texts.keys()].sort()) await this.serially(() => this.apply(file));
    await this.forgetMissing();
  }

  /** Files that owned objects but are no longer in the folder (removed while Quarry was down). */
  private async forgetMissing(): Promise<void> {
    const world = await loadWorld(this.opts.store, this.opts.sources);
    const owners = new Set(
      allDocs(world)
        .map((d) => d.metadata.source)
        .filter(fileSource)
        .filter((s) => !s.orphaned)
        .map((s) => s.file),
    );
    for (const f of owners) if (!this.texts.has(f)) await this.fileChanged(f, null);
  }

  /** What applying `text` as `file` would change, without changing anything. */
  async plan(file: string, text: string): Promise<PlanView> {
    return this.serially(async () =>
      planView(await evaluate(file, text, this.load, this.v, (f) => this.isLive(f, file), this.opts.limits, this.usage, this.pools)),
    );
  }

  /** What is on each OSD, from Ceph within a short deadline; empty when it does not answer (a
   * plan never fails nor waits long for it). */
  private readonly usage = async (): Promise<OsdUsage> =>
    new Map((await this.within(this.opts.osdDf)).map((r) => [r.id, { bytes: r.dataBytes, pgs: r.pgs }]));

  /** What is in each pool, the same way. */
  private readonly pools = async (): Promise<PoolUsage> =>
    new Map((await this.within(this.opts.poolDf)).map((r) => [r.name, { objects: r.objects, bytes: r.storedBytes }]));

  /** Ceph's answer within osdDfTimeoutMs; none (an empty list) when it is late or fails. */
  private async within<T>(ask: (() => Promise<readonly T[]>) | undefined): Promise<readonly T[]> {
    if (!ask) return [];
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.opts.osdDfTimeoutMs ?? OSD_DF_TIMEOUT_MS);
    });
    try {
      return (await Promise.race([ask(), late])) ?? [];
    } catch {
      return [];
    } finally {
      clearTimeout(timer);
    }
  }

  status(): FileStatus[] {
    return [...this.states.values()].sort((a, b) => a.file.localeCompare(b.file));
  }

  private isLive(other: string, self: string): boolean {
    return other !== self && typeof this.texts.get(other) === 'string';
  }

  private soon(): void {
    if (this.pendingReapply || !this.scanned) return;
    this.pendingReapply = setTimeout(() => {
      this.pendingReapply = null;
      for (const [file, text] of this.texts) if (text !== null) void this.serially(() => this.apply(file));
    }, 500);
    this.pendingReapply.unref();
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async apply(file: string): Promise<FileStatus> {
    const text = this.texts.get(file) ?? null;
    const attempts = this.opts.attempts ?? 5;
    for (let attempt = 1; ; attempt++) {
      const e = await evaluate(file, text, this.load, this.v, (f) => this.isLive(f, file), this.opts.limits ?? DEFAULT_LIMITS, this.usage);
      if (e.errors.length) return this.failed(file, e.documents, `${file}: ${e.errors.length} error(s); nothing was changed`, e.errors);
      try {
        // The audit trail names the file as the author of what it changes.
        await asActor({ type: 'file', name: file }, () => applyChanges(this.opts.store, e.changes));
      } catch (err) {
        if (err instanceof ConflictError && attempt < attempts) continue;
        return this.failed(file, e.documents, `${file}: ${(err as Error).message}; nothing was changed`, []);
      }
      const after = ownedObjects(await loadWorld(this.opts.store, this.opts.sources), file);
      const tracked = this.track(file, e.pending);
      const prev = this.states.get(file);
      const wasFailed = prev?.state === 'failed' ? prev.lastError : null;
      const status = this.record(file, {
        state: text === null ? 'deleted' : tracked.pending.length ? 'pending' : 'applied',
        documents: e.documents,
        appliedAt: this.now(),
        lastError: null,
        objects: after.owned.map((d) => ({ kind: d.kind, id: d.id, name: d.name, document: d.metadata.source?.document ?? null })),
        pending: tracked.pending,
        orphans: after.orphans.map((d) => ({
          kind: d.kind,
          id: d.id,
          name: d.name,
          document: null,
          condition: {
            type: 'Orphaned',
            status: 'True',
            reason: 'RemovedFromSpec',
            message: `${file} no longer declares this ${d.kind}; it holds data, so it was kept. Declare it with state: absent to remove it.`,
          },
        })),
      });
      if (text === null && after.orphans.length === 0) this.states.delete(file);
      if (e.changes.length || text === null) this.opts.publish('specs.applied', { ...planView(e), state: status.state });
      // A refused file that applies again is said, with the error it had: else its fix, when it
      // changes nothing (the last good text put back), would go unannounced.
      if (wasFailed && text !== null)
        this.opts.publish('specs.recovered', {
          file,
          state: status.state,
          failedSince: this.failedSince.get(file) ?? null,
          error: wasFailed,
        });
      this.failedSince.delete(file);
      for (const ev of tracked.events) this.opts.publish(ev.type, ev.payload);
      return status;
    }
  }

  private failed(file: string, documents: number, message: string, errors: SpecError[]): FileStatus {
    const prev = this.states.get(file);
    const same =
      prev?.state === 'failed' && prev.lastError?.message === message && JSON.stringify(prev.lastError.errors) === JSON.stringify(errors);
    const status = this.record(file, {
      state: 'failed',
      documents,
      appliedAt: prev?.appliedAt ?? null,
      lastError: { message, errors },
      objects: prev?.objects ?? [],
      pending: prev?.pending ?? [],
      orphans: prev?.orphans ?? [],
    });
    // A file that fails again the same way (re-checked after a world change) is said once.
    if (!same) this.opts.publish('specs.failed', { file, message, errors });
    if (!this.failedSince.has(file)) this.failedSince.set(file, this.now());
    return status;
  }

  /** This apply's pending entries against the last: with since when, NotSeen past the grace,
   * and the events of what changed; a recheck is set for the next entry to pass the grace. */
  private track(file: string, raw: Pending[]): ReturnType<typeof trackPending> {
    const out = trackPending(
      file,
      this.tracks.get(file) ?? new Map(),
      raw,
      Date.parse(this.now()),
      this.opts.unseenGraceMs ?? NODE_UNSEEN_GRACE_MS,
    );
    if (out.track.size) this.tracks.set(file, out.track);
    else this.tracks.delete(file);
    this.rechecks.set(file, out.recheckAt);
    return out;
  }

  private record(file: string, s: Omit<FileStatus, 'file'>): FileStatus {
    const status = { file, ...s };
    this.states.set(file, status);
    return status;
  }

  private now(): string {
    return this.opts.now?.() ?? new Date().toISOString();
  }
}
