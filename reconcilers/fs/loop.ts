// The filesystem loop's effectful half: asks Ceph for pools, filesystems and MDS daemons once
// the monitors have quorum, writes the Filesystem's status, and starts the master-level
// 'ceph.fs.create' run. It keeps looking after the filesystem is ready: an MDS can go away.
import { Daemon } from '../../src/catalogue/index.js';
import { withOrphaned } from '../../src/runtime/conditions.js';
import type { CephApi } from '../../src/clients/ceph-api.js';
import type { MdsStat } from '../../src/clients/ceph-types.js';
import { CLUSTER_ID, CephKind, type ClusterSpec, type ClusterStatus } from '../../src/model/ceph-kinds.js';
import type { Clock } from '../../src/model/clock.js';
import { StorageKind, type FilesystemSpec, type FilesystemStatus } from '../../src/model/storage-kinds.js';
import type { Store } from '../../src/store/types.js';
import type { Reconciler, Result } from '../../src/runtime/types.js';
import { applyPlan, writeOwned, type StatusOwner } from '../../src/runtime/loop-kit/index.js';
import type { RunContext, StartRequest } from '../../src/tasks/types.js';
import { hasQuorum, type CephLoopDeps } from '../shared/ceph-deps.js';
import { runInfo } from '../shared/runs.js';
import { FS_CREATE_TASK, FsDeleteTask, planFs, type FsCephView, type FsObserved, type FsPlan } from './plan.js';
import { answered, askScript, deletionRequest, ignoreGone } from '../shared/deletion-runs.js';
import { fsDeletionQuestion, type Holding } from '../../src/model/deletion.js';
import { runTarget } from '../../src/model/object-names.js';

export interface FsLoopDeps extends Pick<CephLoopDeps, 'tasks' | 'retryBaseMs' | 'blockedRecheckMs' | 'runTimeoutMs'> {
  store: Store;
  ceph: CephApi;
  clock: Clock;
  /** How often a filesystem is looked at again once nothing is left to do. */
  pollMs: number;
  queryTimeoutMs: number;
}

export function fsLoop(deps: FsLoopDeps): Reconciler<FsObserved, FsPlan> {
  return {
    name: 'fs',
    kind: StorageKind.Filesystem,
    dependsOn: ['cluster', Daemon.mon, Daemon.mds],
    observe: (id) => observe(deps, id),
    plan: planFs,
    apply: (o, p) => apply(deps, o, p),
  };
}

async function observe(deps: FsLoopDeps, id: string): Promise<FsObserved | undefined> {
  const fs = await deps.store.get<FilesystemSpec, FilesystemStatus>(StorageKind.Filesystem, id);
  if (!fs) return undefined;
  const cluster = await deps.store.get<ClusterSpec, ClusterStatus>(CephKind.Cluster, CLUSTER_ID);
  // The run first, Ceph second: a run that completes in between is then seen with its result.
  const latest = (task: string) => deps.tasks.latestFor(StorageKind.Filesystem, id, task);
  const [create, confirm, del] = await Promise.all([latest(FS_CREATE_TASK), latest(FsDeleteTask.confirm), latest(FsDeleteTask.delete)]);
  const run = runInfo(create);
  const quorum = hasQuorum(cluster);
  const deletion = { confirmRun: answered(confirm), deleteRun: runInfo(del) };
  const base = { fs, quorum, run, deletion, now: deps.clock.now(), nowIso: deps.clock.iso(), retryBaseMs: deps.retryBaseMs };
  if (!quorum) return { ...base, ceph: null };
  try {
    return { ...base, ceph: await view(deps, fs.spec.name) };
  } catch (err) {
    return { ...base, ceph: { error: err instanceof Error ? err.message : String(err) } };
  }
}

async function view(deps: FsLoopDeps, name: string): Promise<FsCephView> {
  const call = { timeoutMs: deps.queryTimeoutMs };
  const [pools, list, mds] = await Promise.all([deps.ceph.poolList(call), deps.ceph.fsList(call), deps.ceph.mdsStat(call)]);
  const entry = list.find((f) => f.name === name);
  return {
    pools: pools.map((p) => ({ name: p.name, pgNum: p.pgNum })),
    listed: entry ? { metadataPool: entry.metadataPool, dataPools: entry.dataPools } : null,
    ...mdsOf(mds, name),
  };
}

/** MDS daemons up anywhere, and the one active for `name`. */
export function mdsOf(stat: MdsStat, name: string): Pick<FsCephView, 'mdsUp' | 'activeMds'> {
  const all = [...stat.standbys, ...stat.filesystems.flatMap((f) => f.daemons)];
  const active = stat.filesystems.find((f) => f.name === name)?.daemons.find((d) => d.state === 'up:active');
  return { mdsUp: all.filter((d) => d.state.startsWith('up:')).length, activeMds: active?.name ?? null };
}

/** The whole status of a Filesystem: this loop is its only writer. */
export const FS_STATUS: StatusOwner = { loop: 'fs', kind: StorageKind.Filesystem, fields: 'all' };

async function apply(deps: FsLoopDeps, o: FsObserved, p: FsPlan): Promise<Result> {
  if (p.remove) {
    // Deleted after a "yes" (or never in Ceph): the declaration goes; a file still saying
    // `state: absent` then plans nothing.
    await deps.store.delete(StorageKind.Filesystem, o.fs.id).catch(ignoreGone);
    return { type: 'done' };
  }
  return applyPlan(
    {
      write: (obs: FsObserved, status: FilesystemStatus) =>
        writeOwned(
          deps.store,
          FS_STATUS,
          obs.fs.id,
          withOrphaned(status, obs.fs.metadata.source, obs.fs.metadata.generation, deps.clock.iso()),
        ).then(() => undefined),
      act: (obs, step) =>
        step.kind === 'create'
          ? createRun(deps, obs, step.attempt)
          : step.kind === 'confirm'
            ? confirmRun(deps, obs, step.attempt)
            : deleteRun(deps, obs, step.attempt),
      start: (req) => deps.tasks.start(req),
      recheckMs: deps.blockedRecheckMs,
      idleMs: deps.pollMs,
    },
    o,
    p,
  );
}

/** The master-level run that makes the pools and the filesystem. */
function createRun(deps: FsLoopDeps, o: FsObserved, attempt: number): StartRequest {
  const { spec } = o.fs;
  return {
    taskName: FS_CREATE_TASK,
    target: runTarget(o.fs),
    attempt,
    timeoutMs: deps.runTimeoutMs,
    args: { ...spec },
    script: async (ctx) => {
      const call = { signal: ctx.signal };
      // `osd pool create` of an existing pool is success and leaves its PG count alone.
      for (const [pool, pgs] of [
        [spec.metadataPool, spec.metadataPG],
        [spec.dataPool, spec.dataPG],
      ] as const) {
        const made = await deps.ceph.poolCreate(pool, pgs, call);
        ctx.log('info', made.created ? `pool ${pool} created with ${pgs} PGs` : `pool ${pool} already exists`);
      }
      const fs = await deps.ceph.fsNew(spec.name, spec.metadataPool, spec.dataPool, call);
      ctx.log(
        'info',
        fs.created
          ? `filesystem ${spec.name} created over ${spec.metadataPool} and ${spec.dataPool}`
          : `filesystem ${spec.name} already exists`,
      );
      return { created: fs.created };
    },
  };
}

/** The question, with what Ceph says the pools hold now (`ceph df`; without an answer the
 * question says so and names the pools alone). */
function confirmRun(deps: FsLoopDeps, o: FsObserved, attempt: number): StartRequest {
  const { spec } = o.fs;
  return deletionRequest(
    o.fs,
    FsDeleteTask.confirm,
    attempt,
    deps.runTimeoutMs,
    askScript(async (ctx) => {
      const names = [spec.metadataPool, spec.dataPool];
      try {
        const df = await deps.ceph.df({ timeoutMs: deps.queryTimeoutMs, signal: ctx.signal });
        const pools: Holding[] = names.flatMap((n) =>
          df.pools.filter((p) => p.name === n).map((p) => ({ name: n, objects: p.objects, bytes: p.storedBytes })),
        );
        return fsDeletionQuestion(spec.name, pools);
      } catch (err) {
        const note = `Ceph did not say what they hold: ${err instanceof Error ? err.message : String(err)}`;
        return fsDeletionQuestion(
          spec.name,
          names.map((name) => ({ name })),
          note,
        );
      }
    }, `filesystem ${spec.name}`),
  );
}

/** `fs fail`, `fs rm`, then both pools, with mon_allow_pool_delete lifted for the time of it
 * and put back as it was. Each verb is idempotent: a retry finishes a half-done deletion. */
function deleteRun(deps: FsLoopDeps, o: FsObserved, attempt: number): StartRequest {
  const { spec } = o.fs;
  return deletionRequest(o.fs, FsDeleteTask.delete, attempt, deps.runTimeoutMs, async (ctx) => {
    const call = { signal: ctx.signal };
    const failed = await deps.ceph.fsFail(spec.name, call);
    const removed = await deps.ceph.fsRm(spec.name, call);
    ctx.log('info', removed.removed || failed.removed ? `filesystem ${spec.name} removed` : `filesystem ${spec.name} was gone already`);
    await withPoolDelete(deps, ctx, async () => {
      for (const pool of [spec.metadataPool, spec.dataPool]) {
        const r = await deps.ceph.poolRm(pool, call);
        ctx.log('info', r.removed ? `pool ${pool} removed with every object in it` : `pool ${pool} was gone already`);
      }
    });
    return {};
  });
}

const ALLOW = [Daemon.mon, 'mon_allow_pool_delete'] as const;

/** Ceph refuses `osd pool rm` unless mon_allow_pool_delete is true: it is set for the time of
 * `fn`, and removed after (back to the default, false) unless it was true before. */
async function withPoolDelete(deps: FsLoopDeps, ctx: Pick<RunContext, 'log'>, fn: () => Promise<void>): Promise<void> {
  const call = { timeoutMs: deps.queryTimeoutMs };
  if ((await deps.ceph.configGet(...ALLOW, call)) === 'true') return fn();
  await deps.ceph.configSet(...ALLOW, 'true', call);
  ctx.log('info', 'mon_allow_pool_delete set to true for the deletion');
  try {
    await fn();
  } finally {
    await deps.ceph.configRm(...ALLOW, call);
    ctx.log('info', 'mon_allow_pool_delete back to its default (false)');
  }
}
