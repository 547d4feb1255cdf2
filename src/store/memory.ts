// The shared core without durability: every write commits the moment it is submitted. For
// tests and the simulated lab, where restarts are not part of the story.
import { NotFoundError } from '../errors.js';
import type { Backend, KeyValue, Precondition, TxnOp, WatchHandler } from './backend.js';
import { checkPrecondition, checkTxn, KvCore, type CoreOptions } from './core.js';

export type MemoryBackendOptions = CoreOptions;

export class MemoryBackend<V = unknown> implements Backend<V> {
  readonly commitsInOrder = true;
  private readonly core: KvCore<V>;
  private state: 'new' | 'open' | 'closed' = 'new';

  constructor(opts: MemoryBackendOptions = {}) {
    this.core = new KvCore<V>(opts);
  }

  async open(): Promise<void> {
    if (this.state === 'closed') throw new Error('store is closed');
    this.state = 'open';
  }

  async close(): Promise<void> {
    this.state = 'closed';
    this.core.stopAll();
  }

  revision(): number {
    return this.core.revision();
  }

  async get(key: string): Promise<KeyValue<V> | undefined> {
    this.ensureOpen();
    return this.core.get(key);
  }

  async list(prefix: string): Promise<{ items: KeyValue<V>[]; revision: number }> {
    this.ensureOpen();
    return { items: this.core.list(prefix), revision: this.core.revision() };
  }

  async put(key: string, value: V, pre?: Precondition): Promise<number> {
    this.ensureOpen();
    checkPrecondition(key, this.core.get(key), pre);
    const event = this.core.apply({ rev: this.core.revision() + 1, op: 'put', key, value });
    this.core.publish([event]);
    return event.revision;
  }

  async delete(key: string, pre?: Precondition): Promise<number> {
    this.ensureOpen();
    const current = this.core.get(key);
    checkPrecondition(key, current, pre);
    if (!current) throw new NotFoundError(`${key} not found`);
    const event = this.core.apply({ rev: this.core.revision() + 1, op: 'del', key });
    this.core.publish([event]);
    return event.revision;
  }

  async txn(ops: TxnOp<V>[]): Promise<number[]> {
    this.ensureOpen();
    checkTxn(ops, (key) => this.core.get(key));
    const events = [];
    const revs: number[] = [];
    for (const o of ops) {
      if (o.op === 'check' || (o.op === 'del' && !this.core.get(o.key))) {
        revs.push(0);
        continue;
      }
      const rev = this.core.revision() + 1;
      events.push(this.core.apply(o.op === 'put' ? { rev, op: 'put', key: o.key, value: o.value } : { rev, op: 'del', key: o.key }));
      revs.push(rev);
    }
    this.core.publish(events);
    return revs;
  }

  watch(fromRevision: number, handler: WatchHandler<V>): () => void {
    this.ensureOpen();
    return this.core.watch(fromRevision, handler);
  }

  private ensureOpen(): void {
    if (this.state !== 'open') throw new Error(`store is ${this.state === 'new' ? 'not open' : 'closed'}`);
  }
}
