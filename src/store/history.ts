// A bounded ring of the newest watch events. Every revision produces exactly one event, so the
// kept revisions are contiguous and a resume point maps to an index without searching.

export class History<E extends { revision: number }> {
  private readonly buf: (E | undefined)[];
  private start = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 0) throw new RangeError(`history size must be a non-negative integer, got ${capacity}`);
    this.buf = new Array<E | undefined>(capacity);
  }

  push(event: E): void {
    if (this.capacity === 0) return;
    if (this.size < this.capacity) {
      this.buf[(this.start + this.size) % this.capacity] = event;
      this.size++;
    } else {
      this.buf[this.start] = event;
      this.start = (this.start + 1) % this.capacity;
    }
  }

  /** Revision of the oldest kept event, undefined when nothing is kept. */
  oldest(): number | undefined {
    return this.size === 0 ? undefined : this.at(0).revision;
  }

  /** The events with from < revision <= to, or undefined when some of them are no longer kept. */
  between(from: number, to: number): E[] | undefined {
    if (from >= to) return [];
    const oldest = this.oldest();
    if (oldest === undefined || from + 1 < oldest) return undefined;
    const out: E[] = [];
    for (let i = from + 1 - oldest; i < this.size; i++) {
      const e = this.at(i);
      if (e.revision > to) break;
      out.push(e);
    }
    return out;
  }

  private at(i: number): E {
    const e = this.buf[(this.start + i) % this.capacity];
    if (e === undefined) throw new Error(`history slot ${i} is empty`);
    return e;
  }
}
