// Main-thread side of a compaction: one worker per fold, terminable on close. A fold killed
// half-way leaves the old snapshot and every segment in place, which opens as before.
import { Worker } from 'node:worker_threads';
import type { FoldJob } from './compact-worker.js';

export interface FoldHandle {
  /** The new snapshot revision once the snapshot is durable. */
  done: Promise<number>;
  terminate(): Promise<void>;
}

export function startFold(job: FoldJob): FoldHandle {
  const worker = new Worker(new URL('./compact-worker.js', import.meta.url), { workerData: job });
  let terminated = false;
  const done = new Promise<number>((resolve, reject) => {
    worker.once('message', (msg: { revision: number }) => resolve(msg.revision));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(terminated ? 'compaction stopped' : `compaction worker exited with ${code}`)));
  });
  return {
    done,
    terminate: async () => {
      terminated = true;
      await worker.terminate();
    },
  };
}
