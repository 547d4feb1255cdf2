// The filesystem loop's pure half: from what Ceph lists (pools, filesystems, MDS daemons) and
// the last create run, the Filesystem's next status and at most one run. The run creates both
// pools and the filesystem in one go; each of its steps is idempotent, so a retry after a
// half-done attempt simply finishes the job.
import { Step } from '../../src/catalogue/index.js';
import type { Doc } from '../../src/model/document.js';
import type { FilesystemSpec, FilesystemStatus, PoolSeen } from '../../src/model/storage-kinds.js';
import { phaseConditions, setConditions, type ConditionInput } from '../../src/runtime/conditions.js';
import { createAttempt, type RunInfo } from '../shared/runs.js';
import { NO_DELETION, deletionActive, planDeletion, type DeletionObserved, type DeletionStep } from '../shared/deletion.js';

import { gateOf, type LoopPlan } from '../../src/runtime/loop-kit/index.js';

export const FS_CREATE_TASK = Step.fsCreate;
export const FsDeleteTask = { confirm: Step.fsDeleteConfirm, delete: Step.fsDelete } as const;

/** Ceph's answers, reduced to what the plan needs. */
export interface FsCephView {
  pools: PoolSeen[];
  /** `fs ls` entry of this filesystem's name, if there is one. */
  listed: { metadataPool: string; dataPools: string[] } | null;
  /** MDS daemons up anywhere (active for some filesystem or standby). */
  mdsUp: number;
  /** The MDS active (rank 0, up:active) for this filesystem. */
  activeMds: string | null;
}

export interface FsObserved {
  fs: Doc<FilesystemSpec, FilesystemStatus>;
  quorum: boolean;
  /** null without quorum (Ceph was not asked); an error when it did not answer. */
  ceph: FsCephView | { error: string } | null;
  run: RunInfo | null;
  /** The newest question and deletion runs (a file's `state: absent`); none when absent. */
  deletion?: Pick<DeletionObserved, 'confirmRun' | 'deleteRun'>;
  now: number;
  nowIso: string;
  retryBaseMs: number;
}

/** The Filesystem's status, the create step, a wait (null: the loop's poll interval, the MDS
 * can come and go), a gate; and the reason and message the Ready condition carries. */
export interface FsPlan extends LoopPlan<FilesystemStatus, { kind: 'create'; attempt: number } | DeletionStep> {
  reason: string;
  message: string;
  /** The declaration goes: deleted after a "yes", or nothing of it was ever in Ceph. */
  remove: boolean;
}

type Phase = NonNullable<FilesystemStatus['phase']>;
type Outcome = { phase: Phase; reason: string; message: string; step?: FsPlan['step']; requeueAfterMs?: number; remove?: boolean };

const MDS_NEEDED = 'a filesystem needs a metadata server';

export function planFs(o: FsObserved): FsPlan {
  const view = o.ceph && !('error' in o.ceph) ? o.ceph : null;
  const out = o.fs.spec.absent ? deletion(o, view) : decide(o, view);
  const status = statusOf(o, view, out);
  const gate = out.phase === 'blocked' ? gateOf(out.reason, out.message) : null;
  const remove = out.remove ?? false;
  return {
    status,
    step: out.step ?? null,
    gate,
    reason: out.reason,
    message: out.message,
    requeueAfterMs: out.requeueAfterMs ?? null,
    remove,
  };
}

/** `state: absent`: ask, then delete the filesystem and its pools; "no" keeps them. */
function deletion(o: FsObserved, view: FsCephView | null): Outcome {
  const { spec } = o.fs;
  const gen = o.fs.metadata.generation;
  const runs = o.deletion ?? NO_DELETION;
  // Quarry never started making it (no create run, nothing seen in Ceph): nothing to ask about.
  const started = o.run !== null || o.fs.status.created === true || (o.fs.status.pools ?? []).length > 0;
  if (!started && !deletionActive(runs, gen))
    return { phase: 'deleting', reason: 'Deleted', message: `filesystem ${spec.name} was never made in Ceph`, remove: true };
  if (!o.quorum) return { phase: 'blocked', reason: 'WaitingForQuorum', message: 'deletion requested; waiting for monitor quorum' };
  if (!view)
    return {
      phase: 'blocked',
      reason: 'CephUnavailable',
      message: `deletion requested; Ceph does not answer: ${o.ceph && 'error' in o.ceph ? o.ceph.error : 'not asked'}`,
    };
  const what = `filesystem ${spec.name} with its pools ${spec.metadataPool} and ${spec.dataPool}`;
  const inCeph = view.listed !== null || view.pools.some((p) => p.name === spec.metadataPool || p.name === spec.dataPool);
  const d = planDeletion({ ...runs, generation: gen, now: o.now, retryBaseMs: o.retryBaseMs }, what);
  // Nothing of it in Ceph and no run under way: nothing to ask about, the declaration goes.
  if (d.state === 'deleted' || (!inCeph && !deletionActive(runs, gen)))
    return { phase: 'deleting', reason: 'Deleted', message: `${what} is not in Ceph (any more)`, remove: true };
  const base = { reason: d.reason, message: d.message, ...(d.step ? { step: d.step } : {}) };
  const out = d.requeueAfterMs === undefined ? base : { ...base, requeueAfterMs: d.requeueAfterMs };
  return { phase: d.state === 'deleting' ? 'deleting' : 'blocked', ...out };
}

function decide(o: FsObserved, view: FsCephView | null): Outcome {
  const { spec } = o.fs;
  if (!o.quorum) return { phase: 'blocked', reason: 'WaitingForQuorum', message: 'waiting for monitor quorum' };
  if (!view)
    return {
      phase: 'blocked',
      reason: 'CephUnavailable',
      message: `Ceph does not answer: ${o.ceph && 'error' in o.ceph ? o.ceph.error : 'not asked'}`,
    };
  if (view.listed) {
    if (view.listed.metadataPool !== spec.metadataPool || !view.listed.dataPools.includes(spec.dataPool)) {
      return {
        phase: 'blocked',
        reason: 'ExistsWithOtherPools',
        message: `Ceph already has a filesystem ${spec.name} over ${view.listed.metadataPool} and ${view.listed.dataPools.join(', ')}; Quarry does not change an existing filesystem`,
      };
    }
    if (view.activeMds) return { phase: 'ready', reason: 'Active', message: `served by mds.${view.activeMds}` };
    if (view.mdsUp === 0) return { phase: 'degraded', reason: 'WaitingForMds', message: `${MDS_NEEDED}: none is running` };
    return { phase: 'creating', reason: 'WaitingForMdsActive', message: 'a metadata server is taking the filesystem on' };
  }
  if (view.mdsUp === 0)
    return {
      phase: 'blocked',
      reason: 'WaitingForMds',
      message: `${MDS_NEEDED}: declare one (POST /ceph/mds) before the filesystem is created`,
    };
  return createOutcome(o);
}

function createOutcome(o: FsObserved): Outcome {
  const { spec } = o.fs;
  const what = `creating pools ${spec.metadataPool} (${spec.metadataPG} PGs) and ${spec.dataPool} (${spec.dataPG} PGs), then the filesystem`;
  // A completed run whose filesystem is not listed: something removed it since; create again.
  return createAttempt(o.run, o.now, o.retryBaseMs, what);
}

function statusOf(o: FsObserved, view: FsCephView | null, out: Outcome): FilesystemStatus {
  const { spec } = o.fs;
  const gen = o.fs.metadata.generation;
  const cur = o.fs.status;
  const pools = view ? [spec.metadataPool, spec.dataPool].flatMap((n) => view.pools.filter((p) => p.name === n)) : (cur.pools ?? []);
  const created = view ? view.listed !== null && out.reason !== 'ExistsWithOtherPools' : (cur.created ?? false);
  const mismatch = pools.filter((p) => p.pgNum !== (p.name === spec.metadataPool ? spec.metadataPG : spec.dataPG));
  const conds: ConditionInput[] = [
    ...phaseConditions(out),
    mismatch.length
      ? {
          type: 'Degraded',
          status: 'True',
          reason: 'PgCountDiffers',
          message: mismatch
            .map(
              (p) =>
                `pool ${p.name} has ${p.pgNum} PGs, not the declared ${p.name === spec.metadataPool ? spec.metadataPG : spec.dataPG} (it existed before; Quarry does not change PG counts)`,
            )
            .join('; '),
        }
      : {
          type: 'Degraded',
          status: out.phase === 'degraded' ? 'True' : 'False',
          reason: out.phase === 'degraded' ? out.reason : 'NotDegraded',
          message: out.phase === 'degraded' ? out.message : '',
        },
  ];
  return {
    ...cur,
    phase: out.phase,
    pools,
    created,
    mdsActive: view ? view.activeMds !== null : (cur.mdsActive ?? false),
    activeMds: view ? view.activeMds : (cur.activeMds ?? null),
    conditions: setConditions(cur.conditions, conds, gen, o.nowIso),
    observedGeneration: gen,
  };
}
