// Data moving off OSDs marked out while up (`ceph osd out`). Ceph keeps such an OSD in each
// PG's acting set (pg_temp) until the PG's new OSDs hold a copy, so the OSD still shows those
// PGs in `osd df` and is "active" to safe-to-destroy. Here each PG waiting to move is an
// entry, moved in order at a rate of the simulated clock, unless backfill is paused (the
// nobackfill flag) or the PG has nowhere to go (too few failure domains left for its size):
// then it stays on the out OSD as `active+clean+remapped` for good, as recorded from Ceph 16.
import type { SimOsd } from './model.js';
import type { SimPg } from './placement.js';

interface Move {
  /** The OSDs marked out that still hold the PG. */
  from: Set<number>;
  /** The acting set when the first of them went out (what serves the PG meanwhile). */
  acting: number[];
}

export class Backfill {
  readonly moves = new Map<string, Move>();
  /** `osd set nobackfill`: nothing moves, every waiting PG is backfill_wait. */
  paused = false;
  /** PGs allowed to move but not moved yet: fractions carry over between looks. */
  private credit = 0;
  private last: number;

  constructor(
    private readonly now: () => number,
    private readonly pgsPerSec: () => number,
  ) {
    this.last = now();
  }

  /** `id` went out while up: its PGs that CRUSH now maps elsewhere start to move. `before` is
   * the placement just before (with its acting sets), `after` the one CRUSH gives now. */
  start(id: number, before: SimPg[], after: SimPg[]): void {
    const next = new Map(after.map((pg) => [pg.pgid, pg]));
    for (const pg of before) {
      if (!pg.acting.includes(id) || next.get(pg.pgid)?.mapped.includes(id)) continue;
      const m = this.moves.get(pg.pgid) ?? { from: new Set<number>(), acting: pg.acting };
      m.from.add(id);
      this.moves.set(pg.pgid, m);
    }
  }

  /** `id` is in again (its PGs map back to it) or gone (purged, destroyed): nothing to move off it. */
  drop(id: number): void {
    for (const [pgid, m] of this.moves) {
      m.from.delete(id);
      if (m.from.size === 0) this.moves.delete(pgid);
    }
  }

  /** Moves what the time passed since the last look allows, in order; a PG that `canMove`
   * refuses waits and lets the next one go. */
  advance(canMove: (pgid: string) => boolean): void {
    const now = this.now();
    const elapsed = Math.max(0, now - this.last);
    this.last = now;
    if (this.paused || this.moves.size === 0) {
      this.credit = 0;
      return;
    }
    const rate = this.pgsPerSec();
    this.credit = rate === Infinity ? Infinity : this.credit + (elapsed * rate) / 1000;
    for (const pgid of [...this.moves.keys()]) {
      if (this.credit < 1) break;
      if (!canMove(pgid)) continue;
      this.moves.delete(pgid);
      this.credit -= 1;
    }
    // Left over with nothing that could move: time spent waiting is not banked.
    if (this.credit >= 1) this.credit = 0;
  }

  /** The placement with the moves laid over it: acting sets and states of the PGs in transit. */
  overlay(pgs: SimPg[], osds: Map<number, SimOsd>): SimPg[] {
    if (this.moves.size === 0) return pgs;
    const up = (id: number) => osds.get(id)?.up === true;
    const busy = new Set<number>();
    return pgs.map((pg) => {
      const m = this.moves.get(pg.pgid);
      if (!m) return pg;
      const room = pg.mapped.length >= pg.pool.size;
      const sources = [...m.from].filter(up);
      if (sources.length === 0) {
        // The out OSD died before its PGs left: the others recover them from their copies.
        const state =
          pg.up.length < pg.pool.minSize
            ? 'undersized+degraded+peered'
            : room
              ? 'active+recovery_wait+degraded'
              : 'active+undersized+degraded';
        return { ...pg, state };
      }
      const acting = m.acting.filter(up);
      let state: string;
      if (acting.length < pg.pool.minSize) state = 'undersized+degraded+remapped+peered';
      else if (!room) state = acting.length >= pg.pool.size ? 'active+clean+remapped' : 'active+undersized+remapped';
      else {
        // osd_max_backfills = 1: each source sends one PG at a time, the rest wait their turn.
        const source = sources[0] as number;
        const moving = !this.paused && !busy.has(source);
        if (moving) busy.add(source);
        state = moving ? 'active+remapped+backfilling' : 'active+remapped+backfill_wait';
      }
      return { ...pg, acting, state };
    });
  }
}
