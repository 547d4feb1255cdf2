// The image loop's pure half: from the Image's desired state, its files as they are on the
// master's disk and its last runs, the next status and at most one step. A file counts as
// present only under its final name, which it gets only once its size and SHA-256 matched.
import type { Doc } from '../../src/model/document.js';
import type { ImagePhase, ImageSpec, ImageStatus } from '../../src/model/image-kinds.js';
import { setConditions } from '../../src/runtime/conditions.js';
import { isActive, nextAttempt, type RunInfo } from '../shared/runs.js';

import type { LoopPlan } from '../../src/runtime/loop-kit/index.js';

export interface FileOnDisk {
  name: string;
  /** Size of the file under its final name; null when absent. */
  size: number | null;
  /** Size of its .part; null when absent. */
  partSize: number | null;
}

export interface ImageObserved {
  image: Doc<ImageSpec, ImageStatus>;
  /** The spec's files as found on disk, in spec order. */
  files: FileOnDisk[];
  /** The image's folder holds anything at all (files, parts, strays). */
  dirExists: boolean;
  download: RunInfo | null;
  removal: RunInfo | null;
  now: number;
  nowIso: string;
  retryBaseMs: number;
}

export type ImageStep =
  | { kind: 'download'; attempt: number }
  | { kind: 'remove'; attempt: number }
  /** A download is under way but the image is no longer wanted. */
  | { kind: 'cancel'; runId: string };

/** The Image's status, the step, a wait (null: nothing to wait for; run state changes and
 * spec changes wake the loop); never a gate. */
export type ImagePlan = LoopPlan<ImageStatus, ImageStep>;

interface Outcome {
  phase: ImagePhase;
  reason: string;
  message: string;
  step?: ImageStep;
  requeueAfterMs?: number;
  /** The last download failed: why, for the Degraded condition. */
  failure?: { reason: string; message: string };
}

export function planImage(o: ImageObserved): ImagePlan {
  const out = o.image.spec.downloaded ? wanted(o) : unwanted(o);
  return { status: statusOf(o, out), step: out.step ?? null, requeueAfterMs: out.requeueAfterMs ?? null, gate: null };
}

const present = (o: ImageObserved): number => o.image.spec.files.filter((f, i) => o.files[i]?.size === f.size).length;

function wanted(o: ImageObserved): Outcome {
  const { files } = o.image.spec;
  if (isActive(o.removal))
    return { phase: 'removing', reason: 'Removing', message: `waiting for removal run ${o.removal!.id} to end before downloading again` };
  if (present(o) === files.length)
    return { phase: 'downloaded', reason: 'Downloaded', message: `${files.length} files in place, size and SHA-256 verified` };
  const what = `downloading ${files.length - present(o)} of ${files.length} files`;
  const next = nextAttempt(o.download, o.now, o.retryBaseMs, what);
  const last = o.download;
  const failure =
    last && last.state !== 'completed' && !isActive(last)
      ? { reason: failureReason(last.error), message: last.error ?? `run ${last.id} ${last.state}` }
      : undefined;
  const base = failure ? { failure } : {};
  if (next.kind === 'busy') return { phase: 'downloading', reason: 'Downloading', message: `${what} (run ${last!.id})` };
  const phase = next.failed ? 'failed' : 'downloading';
  if (next.kind === 'wait') return { ...base, phase, reason: next.reason, message: next.message, requeueAfterMs: next.waitMs };
  return {
    ...base,
    phase,
    reason: next.reason === 'Starting' ? 'Downloading' : next.reason,
    message: next.message,
    step: { kind: 'download', attempt: next.attempt },
  };
}

function unwanted(o: ImageObserved): Outcome {
  if (isActive(o.download))
    return {
      phase: 'removing',
      reason: 'Canceling',
      message: `stopping download run ${o.download!.id}`,
      step: { kind: 'cancel', runId: o.download!.id },
    };
  if (!o.dirExists) return { phase: 'removed', reason: 'Removed', message: 'no files of this image are on the master' };
  const next = nextAttempt(o.removal, o.now, o.retryBaseMs, 'removing the files');
  if (next.kind === 'busy') return { phase: 'removing', reason: 'Removing', message: `removing the files (run ${o.removal!.id})` };
  if (next.kind === 'wait') return { phase: 'removing', reason: next.reason, message: next.message, requeueAfterMs: next.waitMs };
  return { phase: 'removing', reason: 'Removing', message: next.message, step: { kind: 'remove', attempt: next.attempt } };
}

/** The catalog's bytes did not match: a reason of its own, as retrying will not help unless
 * the registry changes. */
const failureReason = (error: string | null): string =>
  error && /SHA-256 mismatch|longer than the catalog/.test(error) ? 'ChecksumMismatch' : 'DownloadFailed';

function statusOf(o: ImageObserved, out: Outcome): ImageStatus {
  const gen = o.image.metadata.generation;
  const { spec } = o.image;
  const files = spec.files.map((f, i) => ({ name: f.name, size: f.size, present: o.files[i]?.size === f.size }));
  const bytes = spec.files.reduce((sum, f, i) => sum + (files[i]!.present ? f.size : Math.min(o.files[i]?.partSize ?? 0, f.size)), 0);
  const busy = out.phase === 'downloading' || out.phase === 'removing';
  const conditions = setConditions(
    o.image.status.conditions,
    [
      { type: 'Ready', status: out.phase === 'downloaded' ? 'True' : 'False', reason: out.reason, message: out.message },
      { type: 'Progressing', status: busy ? 'True' : 'False', reason: out.reason, message: busy ? out.message : '' },
      out.failure
        ? { type: 'Degraded', status: 'True', reason: out.failure.reason, message: out.failure.message }
        : { type: 'Degraded', status: 'False', reason: 'NotDegraded', message: '' },
    ],
    gen,
    o.nowIso,
  );
  return {
    ...o.image.status,
    phase: out.phase,
    files,
    bytes,
    total: spec.files.reduce((sum, f) => sum + f.size, 0),
    verified: files.every((f) => f.present),
    conditions,
    observedGeneration: gen,
  };
}
