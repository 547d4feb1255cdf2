// Builders shared by the store tests.
import { newNodeSpec } from '../../src/fleet/discovery.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { ManualClock } from '../../src/model/clock.js';
import type { NodeSpec } from '../../src/model/kinds.js';

export function nodeSpec(over: Partial<NodeSpec> = {}): NodeSpec {
  return { ...newNodeSpec('52:54:00:00:00:01', 'node-1'), ...over };
}

/** Deterministic ids: id-1, id-2, ... */
export function counterIds(prefix = 'id'): () => string {
  let n = 0;
  return () => `${prefix}-${++n}`;
}

export function testDeps(): { clock: ManualClock; ids: () => string } {
  return { clock: new ManualClock(), ids: counterIds() };
}

/** A fresh temp dir removed when the test ends. */
export async function tempDir(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-store-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Lets queued microtasks (watch catch-up) run. */
export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Waits until `done()` holds (events from etcd arrive over the network, not in a tick); throws
 * naming `what` if it has not after `ms`, so a test that waits for what never comes fails. */
export async function until(done: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
