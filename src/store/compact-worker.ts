// Worker-thread entry of a compaction: serialising a large snapshot would block the main
// event loop for hundreds of ms, so the fold happens here, from files only. Values stay bytes
// (fold.ts); a snapshot in another layout than the one written here is folded by parsing it.
import { parentPort, workerData } from 'node:worker_threads';
import { foldSegmentsBytes } from './fold.js';
import { foldSegments } from './snapshot.js';

export interface FoldJob {
  dir: string;
  segments: string[];
}

const job = workerData as FoldJob;
const revision = (await foldSegmentsBytes(job.dir, job.segments)) ?? (await foldSegments(job.dir, job.segments));
parentPort?.postMessage({ revision });
