// The replay buffer behind Last-Event-ID: the newest events, already framed, so a reconnect
// costs a slice and a join rather than a JSON.stringify per event.

/** One event as it goes on the wire. */
export interface Frame {
  seq: number;
  text: string;
  /** UTF-8 length of `text`, computed once so per-client accounting stays cheap. */
  bytes: number;
}

export class FrameRing {
  private readonly slots: (Frame | undefined)[];
  private start = 0;
  private count = 0;
  /** Every event with a seq above this one is still kept. */
  private floorSeq: number;

  constructor(
    readonly capacity: number,
    initialSeq = 0,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`ring capacity must be a positive integer, got ${capacity}`);
    this.slots = new Array<Frame | undefined>(capacity);
    this.floorSeq = initialSeq;
  }

  get size(): number {
    return this.count;
  }

  /** The seq below which history is gone: a client must be at or above it to replay. */
  get floor(): number {
    return this.floorSeq;
  }

  push(frame: Frame): void {
    if (this.count === this.capacity) {
      const evicted = this.slots[this.start];
      if (evicted) this.floorSeq = evicted.seq;
      this.slots[this.start] = frame;
      this.start = (this.start + 1) % this.capacity;
      return;
    }
    this.slots[(this.start + this.count) % this.capacity] = frame;
    this.count += 1;
  }

  /** The frames with seq > after, oldest first; null when some of them were already evicted. */
  since(after: number): Frame[] | null {
    if (after < this.floorSeq) return null;
    const first = this.firstAbove(after);
    const out: Frame[] = [];
    for (let i = first; i < this.count; i++) {
      const frame = this.at(i);
      if (frame) out.push(frame);
    }
    return out;
  }

  clear(): void {
    this.slots.fill(undefined);
    this.start = 0;
    this.count = 0;
  }

  private at(i: number): Frame | undefined {
    return this.slots[(this.start + i) % this.capacity];
  }

  /** Binary search: seqs only grow, so the kept frames are sorted. */
  private firstAbove(after: number): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.at(mid)?.seq ?? Infinity) > after) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
