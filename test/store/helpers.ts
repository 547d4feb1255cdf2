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
