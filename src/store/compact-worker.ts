// Worker-thread entry of a compaction: serialising a large snapshot would block the main
// event loop for hundreds of ms, so the fold happens here, from files only.
import { parentPort, workerData } from 'node:worker_threads';
import { foldSegments } from './snapshot.js';

export interface FoldJob {
  dir: string;
  segments: string[];
}

const job = workerData as FoldJob;
const revision = await foldSegments(job.dir, job.segments);
parentPort?.postMessage({ revision });
