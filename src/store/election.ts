// Leader election among the controllers that share one etcd (#18 parts 3–4). One key, written
// only if absent and bound to the writer's lease: whoever writes it leads until its lease ends
// (a SIGKILLed leader's after at most the TTL; a stopped one's at once, as it resigns). The
// others watch the key and campaign again when it goes. The revision the winner wrote it at is
// its fence (fenced.ts): every loop write compares it, so a deposed leader writes nothing.
//
// Kubernetes' controllers use a 15 s lease renewed every 2 s; etcd's keepalive runs at a third
// of the TTL, so a 2 s TTL (etcd's smallest with its default timing) costs one small request
// every 0.7 s and bounds failover to about the TTL.
import type { Etcd3, IKeyValue, Lease, Watcher } from 'etcd3';
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
  private lastRenewed = 0;
  private checking = false;
  private checkTimer: NodeJS.Timeout | undefined;
  private keyGone: (() => void) | undefined;
  /** Deletions of the key seen by the watch. */
  private deletions = 0;

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

  /** The proof of leadership loop writes carry; null while this controller does not lead. */
  fence(): Fence | null {
    return this.held;
  }

  /** A busy process (a long GC, a loaded machine) may handle a renewal's answer late; only etcd
   * knows whether the lease ran out, so a late renewal is confirmed before anyone is deposed. */
  private async checkRenewal(lease: Lease): Promise<void> {
    const ttlMs = this.opts.ttlSeconds * 1000;
    if (this.checking || !this.held || Date.now() - this.lastRenewed <= ttlMs) return;
    this.checking = true;
    try {
      const res = await lease.keepaliveOnce({ deadline: Date.now() + ttlMs / 2 });
      if (Number(res.TTL) > 0) this.lastRenewed = Date.now();
      else this.lose('the leadership lease expired');
    } catch (err) {
      this.lose(
        `the leadership lease could not be renewed for ${this.opts.ttlSeconds} s (${err instanceof Error ? err.message : String(err)})`,
      );
    } finally {
      this.checking = false;
    }
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
      // Someone leads: wait for the key to go (the watch), or a TTL as a safety net.
      await new Promise<void>((resolve) => {
        this.keyGone = resolve;
        setTimeout(resolve, this.opts.ttlSeconds * 1000).unref();
      });
      this.keyGone = undefined;
    }
  }

  /** Gives the leadership up at once (a clean stop): the next controller need not wait out the
   * lease. Only our own key is deleted. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.keyGone?.();
    clearInterval(this.checkTimer);
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
    const lease = this.client.lease(this.opts.ttlSeconds, { autoKeepAlive: true });
    const id = await lease.grant();
    const record: LeaderRecord = { id: this.opts.me.id, url: this.opts.me.url, since: new Date().toISOString() };
    const res = await this.client
      .if(this.keys.full, 'Create', '==', 0)
      .then(this.client.put(this.keys.full).value(JSON.stringify(record)).lease(id))
      .else(this.client.get(this.keys.full))
      .commit();
    if (!res.succeeded) {
      await lease.revoke().catch(() => undefined);
      this.see(res.responses[0]?.response_range.kvs[0]);
      return null;
    }
    this.lease = lease;
    this.held = { key: this.keys.store, modRevision: Number(res.header.revision) };
    this.lastRenewed = Date.now();
    this.setLeader(record);
    lease.on('keepaliveSucceeded', () => (this.lastRenewed = Date.now()));
    lease.on('lost', (err) => this.lose(`the leadership lease was lost (${err.message})`));
    // etcd3 says "lost" only after twice the TTL without a renewal; by then another controller
    // may have led for a whole TTL. A leader that has not heard a renewal within the TTL asks
    // etcd once more and stops itself unless etcd says the lease still runs.
    this.checkTimer = setInterval(() => void this.checkRenewal(lease), (this.opts.ttlSeconds * 1000) / 4);
    this.checkTimer.unref();
    return this.held;
  }

  private lose(why: string): void {
    if (!this.held || this.stopped) return;
    this.held = null;
    clearInterval(this.checkTimer);
    // The keepalive stops first (revoke does): a deposed leader that reaches etcd again must not
    // keep its key alive and the other candidates out.
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
    w.on('put', (kv) => {
      this.see(kv);
      // Our key rewritten by someone else: we no longer lead (not expected, but fenced anyway).
      if (this.held && Number(kv.mod_revision) !== this.held.modRevision) this.lose('the election key was taken by another controller');
    });
    w.on('delete', () => {
      this.deletions++;
      this.setLeader(null);
      if (this.held) this.lose('the election key was deleted');
      this.keyGone?.();
    });
    w.on('error', (err) => this.opts.onError?.(err));
    this.see((await this.client.get(this.keys.full).exec()).kvs[0]);
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
