// Leader election among the controllers that share one etcd (#18 parts 3–4). One key, written
// only if absent and bound to the writer's lease: whoever writes it leads until its lease ends
// (a SIGKILLed leader's after at most the TTL; a stopped one's at once, as it resigns). The
// others watch the key and campaign again when it goes. The revision the winner wrote it at is
// its fence (fenced.ts): every loop write compares it, so a deposed leader writes nothing.
//
// The lease is renewed by this file, not by etcd3's keepalive, because the fence must be bounded
// by time: etcd cannot expire the lease before the send time of the last renewal it answered
// plus the TTL, so until then the leader may write (`fence()`); past it, its writes wait
// (fence() null, the loops requeue) while it still claims the key. A renewal answered later
// proves the lease never ran out — a lease id never comes back — so nobody else can have led,
// and the writes go on. Only when etcd says the lease ended, the key moves, or no renewal has
// been answered for twice the TTL does it depose itself. That rides out an etcd leader election
// (measured 2.1–2.3 s without an answer on a 3-member cluster with etcd's default timing: longer
// than a 2 s TTL), during which etcd extends every lease anyway.
//
// Renewals go every quarter TTL, each to a member chosen at random with a deadline of a third of
// the TTL; a failed one is tried again at once, so a dead member costs one attempt, not a TTL.
import { EtcdLeaseInvalidError, type Etcd3, type IKeyValue, type Lease, type Watcher } from 'etcd3';
import type { LeaderView } from '../model/leadership.js';
import type { Fence } from './fenced.js';

/** The election key, under the store's prefix. `~` is no kind's first letter: the store's own
 * watch and lists skip it (etcd-values.ts). */
export const LEADER_KEY = '~leader';

/** What the leader advertises in its key. */
export interface LeaderRecord {
  id: string;
  url: string;
  since: string;
}

export interface ElectionOptions {
  /** This controller: its id (unique per process) and the API URL other controllers forward to. */
  me: { id: string; url: string };
  ttlSeconds: number;
  /** Called once when a leadership we held ends without our resigning: the lease lapsed (etcd
   * unreachable past the TTL) or the key was taken. The controller must stop acting. */
  onLost: (why: string) => void;
  /** Transient failures while campaigning or watching (they are retried). */
  onError?: (err: unknown) => void;
  /** Told when the known leader changes (null: nobody leads). */
  onLeader?: (leader: LeaderRecord | null) => void;
}

/** How often a candidate looks at the key while someone else holds it. */
const KEY_POLL_MS = 1_000;

/** How long a stop waits for etcd to confirm each of its last two requests. */
const STOP_BOUND_MS = 2_000;

/** Settles when `p` does or after ms, whichever is first; never rejects. */
async function bounded(p: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (!p) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p.catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

export class EtcdElection implements LeaderView {
  private leader: LeaderRecord | null = null;
  private held: Fence | null = null;
  private lease: Lease | undefined;
  private watcher: Watcher | undefined;
  private stopped = false;
  /** Epoch ms before which etcd cannot have expired our lease (last answered renewal's send
   * time + TTL). */
  private validUntil = 0;
  private keyGone: (() => void) | undefined;
  /** Deletions of the key seen by the watch. */
  private deletions = 0;
  /** The newest revision at which this candidate learned the key's state. */
  private known = 0;

  constructor(
    private readonly client: Etcd3,
    /** The key as etcd names it (prefix + LEADER_KEY) and as the store names it (LEADER_KEY). */
    private readonly keys: { full: string; store: string },
    private readonly opts: ElectionOptions,
  ) {}

  isLeader(): boolean {
    return this.held !== null;
  }

  leaderUrl(): string | null {
    return this.leader?.url ?? null;
  }

  /** The proof of leadership loop writes carry: null while this controller does not lead, and
   * while its lease may have run out (no renewal answered within the TTL) — then writes wait
   * for the next answered renewal. */
  fence(): Fence | null {
    return this.held && Date.now() < this.validUntil ? this.held : null;
  }

  /** The leadership this controller claims, confirmed or not: what its event feed is written
   * under (each batch compares the key, so a deposed leader's are refused whole). */
  claim(): Fence | null {
    return this.held;
  }

  /** Epoch ms until which the lease is known to run (0 while not leading): /leaderz and the
   * tests read it. */
  confirmedUntil(): number {
    return this.held ? this.validUntil : 0;
  }

  private get ttlMs(): number {
    return this.opts.ttlSeconds * 1000;
  }

  /** Renews the lease while `held` is ours (see the file's header). */
  private async renew(lease: Lease, held: Fence): Promise<void> {
    let stalled = false;
    while (this.holds(held)) {
      const sent = Date.now();
      try {
        await lease.keepaliveOnce({ deadline: sent + this.ttlMs / 3 });
        this.validUntil = Math.max(this.validUntil, sent + this.ttlMs);
        stalled = false;
        await this.pause(this.ttlMs / 4);
      } catch (err) {
        if (!this.holds(held)) return;
        if (err instanceof EtcdLeaseInvalidError) {
          this.lose('the leadership lease was lost: etcd says it ended');
          return;
        }
        // Told once per stall: a dead member is retried around every 100 ms.
        if (!stalled) this.opts.onError?.(new Error(`renewing the leadership lease: ${String(err)}`));
        stalled = true;
        if (Date.now() >= this.validUntil + this.ttlMs) {
          const why = err instanceof Error ? err.message : String(err);
          this.lose(`the leadership lease could not be renewed for ${2 * this.opts.ttlSeconds} s (${why})`);
          return;
        }
        await this.pause(100);
      }
    }
  }

  /** Whether `held` is still this controller's leadership (read again after every await). */
  private holds(held: Fence): boolean {
    return this.held === held && !this.stopped;
  }

  /** Campaigns until elected (resolves with the fence) or stopped (rejects). */
  async campaign(): Promise<Fence> {
    await this.watchKey();
    for (;;) {
      if (this.stopped) throw new Error('the election was stopped');
      // Counted before trying: a deletion seen while the try is answered is not missed.
      const goneBefore = this.deletions;
      try {
        const won = await this.tryOnce();
        if (won) return won;
      } catch (err) {
        this.opts.onError?.(err);
        await this.pause(200);
        continue;
      }
      if (this.deletions !== goneBefore) continue;
      // Someone leads: wait for the key to go. The watch says so at once; a look every second
      // covers a delete it missed — the etcd3 client resumes a reconnected watch from the
      // newest header revision it saw, which can be past an event not yet delivered
      // (etcd-watch.ts), and a member lost or without a leader ends the stream. Waiting out
      // the TTL instead left a follower 30 s behind a resigned leader in CI.
      await new Promise<void>((resolve) => {
        const gone = (): void => {
          clearInterval(poll);
          resolve();
        };
        const poll = setInterval(() => {
          this.client
            .get(this.keys.full)
            .exec()
            .then((r) => r.kvs.length === 0 && gone())
            .catch(() => undefined);
        }, KEY_POLL_MS);
        poll.unref();
        this.keyGone = gone;
      });
      this.keyGone = undefined;
    }
  }

  /** Gives the leadership up at once (a clean stop): the next controller need not wait out the
   * lease. Only our own key is deleted. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.keyGone?.();
    const held = this.held;
    this.held = null;
    if (held) await this.client.if(this.keys.full, 'Mod', '==', held.modRevision).then(this.client.delete().key(this.keys.full)).commit();
    // Bounded: etcd3's watch cancel waits for etcd's answer on the stream, and a stream torn down
    // meanwhile never gives one — a stop that hung there held a whole test process (and would
    // hold a controller's shutdown). The lease ends with its TTL anyway.
    await bounded(this.lease?.revoke(), STOP_BOUND_MS);
    await bounded(this.watcher?.cancel(), STOP_BOUND_MS);
  }

  private async tryOnce(): Promise<Fence | null> {
    const sent = Date.now();
    const lease = this.client.lease(this.opts.ttlSeconds, { autoKeepAlive: false });
    const id = await lease.grant();
    const record: LeaderRecord = { id: this.opts.me.id, url: this.opts.me.url, since: new Date().toISOString() };
    const res = await this.client
      .if(this.keys.full, 'Create', '==', 0)
      .then(this.client.put(this.keys.full).value(JSON.stringify(record)).lease(id))
      .else(this.client.get(this.keys.full))
      .commit();
    if (!res.succeeded) {
      await lease.revoke().catch(() => undefined);
      if (this.newer(Number(res.header.revision))) this.see(res.responses[0]?.response_range.kvs[0]);
      return null;
    }
    this.newer(Number(res.header.revision));
    this.lease = lease;
    const held: Fence = { key: this.keys.store, modRevision: Number(res.header.revision) };
    this.held = held;
    // Granted after `sent`, so it cannot end before sent + TTL.
    this.validUntil = sent + this.ttlMs;
    this.setLeader(record);
    lease.on('lost', (err) => this.lose(`the leadership lease was lost (${err.message})`));
    void this.renew(lease, held);
    return held;
  }

  private lose(why: string): void {
    if (!this.held || this.stopped) return;
    this.held = null;
    // The renewals stop with `held`, and the lease is revoked: a deposed leader that reaches etcd
    // again must not keep its key alive and the other candidates out.
    void this.lease?.revoke().catch(() => undefined);
    this.lease = undefined;
    this.opts.onLost(why);
  }

  /** Follows the key: who leads now, and when it goes (the campaign's cue). */
  private async watchKey(): Promise<void> {
    if (this.watcher) return;
    const w = await this.client.watch().key(this.keys.full).withPreviousKV().create();
    // A stop() while the watch was being created found none to cancel: this one would outlive
    // the client (etcd3 keeps re-creating a registered watch) and hold the process.
    if (this.stopped) {
      await bounded(w.cancel(), STOP_BOUND_MS);
      return;
    }
    this.watcher = w;
    // An event older than what this candidate knows (its own win, a read) is history: a
    // resigned leader's delete delivered after the next one won must neither depose it nor
    // make it forget who leads.
    w.on('put', (kv) => {
      if (!this.newer(Number(kv.mod_revision))) return;
      this.see(kv);
      // Our key rewritten by someone else: we no longer lead (not expected, but fenced anyway).
      if (this.held && Number(kv.mod_revision) !== this.held.modRevision) this.lose('the election key was taken by another controller');
    });
    w.on('delete', (kv) => {
      this.deletions++;
      if (this.newer(Number(kv.mod_revision))) {
        this.setLeader(null);
        if (this.held) this.lose('the election key was deleted');
      }
      this.keyGone?.();
    });
    w.on('error', (err) => this.opts.onError?.(err));
    const res = await this.client.get(this.keys.full).exec();
    if (this.newer(Number(res.header.revision))) this.see(res.kvs[0]);
  }

  /** Whether news of the key at `revision` is newer than what this candidate knows; if so it is
   * what it knows from now on. */
  private newer(revision: number): boolean {
    if (revision <= this.known) return false;
    this.known = revision;
    return true;
  }

  private see(kv: IKeyValue | undefined): void {
    if (!kv) {
      this.setLeader(null);
      return;
    }
    try {
      const r = JSON.parse(kv.value.toString('utf8')) as LeaderRecord;
      this.setLeader(typeof r.id === 'string' && typeof r.url === 'string' ? r : null);
    } catch {
      this.setLeader(null);
    }
  }

  private setLeader(r: LeaderRecord | null): void {
    if (r?.id === this.leader?.id && r?.url === this.leader?.url) return;
    this.leader = r;
    this.opts.onLeader?.(r);
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms).unref());
  }
}
