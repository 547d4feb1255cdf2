// The RGW user loop's effectful half: once there is quorum and a gateway, a master-level run
// takes the user from RGW (user info) or creates it (user create), and stores its key pair:
// the secret in an RgwUserSecret document, never in a log line, a run result or an error.
import { Daemon } from '../../src/catalogue/index.js';
import { withOrphaned } from '../../src/runtime/conditions.js';
import type { RgwApi } from '../../src/clients/ceph-api.js';
import type { RgwUser } from '../../src/clients/rgw-admin.js';
import { ConflictError } from '../../src/errors.js';
import { CLUSTER_ID, CephKind, type ClusterSpec, type ClusterStatus } from '../../src/model/ceph-kinds.js';
import type { Clock } from '../../src/model/clock.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import {
  StorageKind,
  type RgwUserSecretSpec,
  type RgwUserSecretStatus,
  type RgwUserSpec,
  type RgwUserStatus,
} from '../../src/model/storage-kinds.js';
import type { Store } from '../../src/store/types.js';
import type { Reconciler, Result } from '../../src/runtime/types.js';
import { applyPlan, writeOwned, type StatusOwner } from '../../src/runtime/loop-kit/index.js';
import type { StartRequest } from '../../src/tasks/types.js';
import { hasQuorum, type CephLoopDeps } from '../shared/ceph-deps.js';
import { runInfo } from '../shared/runs.js';
import { RGW_USER_CREATE_TASK, RgwUserDeleteTask, planRgwUser, type RgwUserObserved, type RgwUserPlan } from './plan.js';
import { answered, askScript, deletionRequest, ignoreGone } from '../shared/deletion-runs.js';
import { rgwUserDeletionQuestion, type Holding } from '../../src/model/deletion.js';
import { runTarget } from '../../src/model/object-names.js';

export interface RgwUserLoopDeps extends Pick<CephLoopDeps, 'tasks' | 'retryBaseMs' | 'blockedRecheckMs' | 'runTimeoutMs'> {
  store: Store;
  rgw: RgwApi;
  clock: Clock;
}

export function rgwUserLoop(deps: RgwUserLoopDeps): Reconciler<RgwUserObserved, RgwUserPlan> {
  return {
    name: 'rgw-user',
    kind: StorageKind.RgwUser,
    dependsOn: ['cluster', Daemon.rgw],
    // A stored (or lost) secret changes whether the user is ready; both share the id.
    watches: [{ kind: StorageKind.RgwUserSecret, map: (doc) => [doc.id] }],
    observe: (id) => observe(deps, id),
    plan: planRgwUser,
    apply: (o, p) => apply(deps, o, p),
  };
}

async function observe(deps: RgwUserLoopDeps, id: string): Promise<RgwUserObserved | undefined> {
  const user = await deps.store.get<RgwUserSpec, RgwUserStatus>(StorageKind.RgwUser, id);
  if (!user) return undefined;
  const [cluster, nodes, secret, run, confirm, del] = await Promise.all([
    deps.store.get<ClusterSpec, ClusterStatus>(CephKind.Cluster, CLUSTER_ID),
    deps.store.list<NodeSpec, NodeStatusFields>(Kind.Node),
    deps.store.get<RgwUserSecretSpec, RgwUserSecretStatus>(StorageKind.RgwUserSecret, id),
    deps.tasks.latestFor(StorageKind.RgwUser, id, RGW_USER_CREATE_TASK),
    deps.tasks.latestFor(StorageKind.RgwUser, id, RgwUserDeleteTask.confirm),
    deps.tasks.latestFor(StorageKind.RgwUser, id, RgwUserDeleteTask.delete),
  ]);
  return {
    user,
    quorum: hasQuorum(cluster),
    gatewayRunning: nodes.some((n) => n.status.daemons?.rgw === true),
    // Only the access key leaves this function: the plan has no use for the secret.
    issued: secret?.status.secretKey ? secret.spec.accessKey : null,
    run: runInfo(run),
    deletion: { confirmRun: answered(confirm), deleteRun: runInfo(del) },
    now: deps.clock.now(),
    nowIso: deps.clock.iso(),
    retryBaseMs: deps.retryBaseMs,
  };
}

/** The whole status of an RgwUser: this loop is its only writer (the service that shows the
 * secret once writes the RgwUserSecret, another kind). */
export const RGW_USER_STATUS: StatusOwner = { loop: 'rgw-user', kind: StorageKind.RgwUser, fields: 'all' };

async function apply(deps: RgwUserLoopDeps, o: RgwUserObserved, p: RgwUserPlan): Promise<Result> {
  if (p.remove) {
    // Deleted after a "yes" (or never made in RGW): the declaration and its key pair go.
    for (const kind of [StorageKind.RgwUserSecret, StorageKind.RgwUser]) await deps.store.delete(kind, o.user.id).catch(ignoreGone);
    return { type: 'done' };
  }
  return applyPlan(
    {
      write: (obs: RgwUserObserved, status: RgwUserStatus) =>
        writeOwned(
          deps.store,
          RGW_USER_STATUS,
          obs.user.id,
          withOrphaned(status, obs.user.metadata.source, obs.user.metadata.generation, obs.nowIso),
        ).then(() => undefined),
      act: (obs, step) =>
        step.kind === 'create'
          ? createRun(deps, obs, step.attempt)
          : step.kind === 'confirm'
            ? confirmRun(deps, obs, step.attempt)
            : deleteRun(deps, obs, step.attempt),
      start: (req) => deps.tasks.start(req),
      recheckMs: deps.blockedRecheckMs,
    },
    o,
    p,
  );
}

/** The master-level run that takes the user from RGW, or creates it, and stores its key pair. */
function createRun(deps: RgwUserLoopDeps, o: RgwUserObserved, attempt: number): StartRequest {
  const { id, spec } = o.user;
  return {
    taskName: RGW_USER_CREATE_TASK,
    target: runTarget(o.user),
    attempt,
    timeoutMs: deps.runTimeoutMs,
    args: { ...spec },
    script: async (ctx) => {
      const call = { signal: ctx.signal };
      let user: RgwUser | undefined = await deps.rgw.userInfo(spec.userId, call);
      if (user) ctx.log('info', `RGW user ${spec.userId} exists already; Quarry keeps its keys`);
      else {
        user = await deps.rgw.userCreate(
          { uid: spec.userId, displayName: spec.displayName, ...(spec.email ? { email: spec.email } : {}) },
          call,
        );
        ctx.log('info', `RGW user ${spec.userId} created`);
      }
      const key = user.keys.find((k) => k.user === spec.userId);
      if (!key) throw new Error(`RGW user ${spec.userId} has no S3 key; Quarry issues keys only when it creates a user`);
      await saveSecret(deps.store, id, { userId: spec.userId, accessKey: key.accessKey }, key.secretKey);
      ctx.log('info', `access key ${key.accessKey} issued; the secret key is stored apart`);
      return { accessKey: key.accessKey };
    },
  };
}

/** Stores the pair; a pair already stored for that access key keeps its "shown" mark. */
async function saveSecret(store: Store, id: string, spec: RgwUserSecretSpec, secretKey: string): Promise<void> {
  try {
    await store.create({ kind: StorageKind.RgwUserSecret, id, name: spec.userId, spec, status: { secretKey, shownAt: null } });
    return;
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
  }
  const known = await store.mustGet<RgwUserSecretSpec, RgwUserSecretStatus>(StorageKind.RgwUserSecret, id);
  if (known.spec.accessKey === spec.accessKey && known.status.secretKey === secretKey) return;
  const updated = await store.updateSpec(StorageKind.RgwUserSecret, id, spec, { resourceVersion: known.metadata.resourceVersion });
  await store.updateStatus(
    StorageKind.RgwUserSecret,
    id,
    { secretKey, shownAt: null },
    { resourceVersion: updated.metadata.resourceVersion },
  );
}

/** The question, naming the buckets RGW says the user owns now (`bucket stats --uid`). */
function confirmRun(deps: RgwUserLoopDeps, o: RgwUserObserved, attempt: number): StartRequest {
  const uid = o.user.spec.userId;
  return deletionRequest(
    o.user,
    RgwUserDeleteTask.confirm,
    attempt,
    deps.runTimeoutMs,
    askScript(async (ctx) => {
      try {
        const buckets: Holding[] = (await deps.rgw.bucketStats(uid, { signal: ctx.signal })).map((b) => ({
          name: b.bucket,
          objects: b.objects,
          bytes: b.bytes,
        }));
        return rgwUserDeletionQuestion(uid, buckets);
      } catch (err) {
        return rgwUserDeletionQuestion(uid, null, `RGW did not list them: ${err instanceof Error ? err.message : String(err)}`);
      }
    }, `RGW user ${uid}`),
  );
}

/** `user rm --purge-data`: the user, its keys, its buckets and their objects. */
function deleteRun(deps: RgwUserLoopDeps, o: RgwUserObserved, attempt: number): StartRequest {
  const uid = o.user.spec.userId;
  return deletionRequest(o.user, RgwUserDeleteTask.delete, attempt, deps.runTimeoutMs, async (ctx) => {
    const r = await deps.rgw.userRm(uid, { signal: ctx.signal });
    ctx.log('info', r.removed ? `RGW user ${uid} removed with its buckets and their objects` : `RGW user ${uid} was gone already`);
    return {};
  });
}
