// The CephApi and RgwApi seams answered by a simulated cluster. Each is the real client
// (CephClient, RgwAdmin) over a SimCephRunner: the loops get exactly the typed values, errors
// and gate verdicts the real CLI produces, and every simulated answer passes the same schemas
// as a real one, so the simulation cannot drift from what Quarry can parse.
import type { CephApi, RgwApi } from '../../clients/ceph-api.js';
import { CephClient, type CallAs, type CallOptions, type CrushRule, type PoolRule } from '../../clients/ceph.js';
import type * as T from '../../clients/ceph-types.js';
import type {
  MdsStopReport,
  MonStopReport,
  NooutState,
  OsdGroupFlag,
  OsdGroupFlagsResult,
  OsdStopReport,
} from '../../clients/ceph-stop-gates.js';
import type { FsStatus } from '../../clients/ceph-map.js';
import { RgwAdmin, type RgwBucketUsage, type RgwUser, type RgwUserCreate } from '../../clients/rgw-admin.js';
import type { SimCephCluster } from './cluster.js';
import { SimCephRunner, type SimCephRunnerOptions } from './runner.js';

export interface SimApiOptions extends SimCephRunnerOptions {
  /** The conf path the client passes (-c); the sim ignores it. */
  conf?: string;
  /** Entity to call as; default client.admin. */
  name?: string;
  /** Deadline of every call; default the real client's 30 s. */
  timeoutMs?: number;
}

const CONF = '/etc/ceph/ceph.conf';

export class SimCephApi implements CephApi {
  readonly runner: SimCephRunner;
  readonly client: CephClient;

  constructor(
    readonly cluster: SimCephCluster,
    opts: SimApiOptions = {},
  ) {
    this.runner = new SimCephRunner(cluster, opts);
    this.client = new CephClient({
      runner: this.runner,
      conf: opts.conf ?? CONF,
      name: opts.name ?? 'client.admin',
      ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
    });
  }

  // The CephApi pick, one by one.
  status = (call?: CallOptions): Promise<T.CephStatus> => this.client.status(call);
  health = (call?: CallOptions): Promise<T.CephHealth> => this.client.health(call);
  df = (call?: CallOptions): Promise<T.CephDf> => this.client.df(call);
  osdTree = (call?: CallOptions): Promise<T.OsdTree> => this.client.osdTree(call);
  osdDump = (call?: CallOptions): Promise<T.OsdDump> => this.client.osdDump(call);
  monDump = (call?: CallOptions): Promise<T.MonDump> => this.client.monDump(call);
  quorumStatus = (call?: CallOptions): Promise<T.QuorumStatus> => this.client.quorumStatus(call);
  mgrStat = (call?: CallOptions): Promise<T.MgrStat> => this.client.mgrStat(call);
  mdsStat = (call?: CallOptions): Promise<T.MdsStat> => this.client.mdsStat(call);
  fsList = (call?: CallOptions): Promise<T.FsListEntry[]> => this.client.fsList(call);
  fsFail = (name: string, call?: CallOptions): Promise<T.Removed> => this.client.fsFail(name, call);
  fsRm = (name: string, call?: CallOptions): Promise<T.Removed> => this.client.fsRm(name, call);
  poolRm = (name: string, call?: CallOptions): Promise<T.Removed> => this.client.poolRm(name, call);
  configGet = (who: string, key: string, call?: CallOptions): Promise<string> => this.client.configGet(who, key, call);
  configSet = (who: string, key: string, value: string, call?: CallOptions): Promise<void> => this.client.configSet(who, key, value, call);
  configRm = (who: string, key: string, call?: CallOptions): Promise<void> => this.client.configRm(who, key, call);
  poolList = (call?: CallOptions): Promise<T.Pool[]> => this.client.poolList(call);
  okToStop = (ids: number[], call?: CallOptions): Promise<T.OkToStop> => this.client.okToStop(ids, call);
  safeToDestroy = (ids: number[], call?: CallOptions): Promise<T.SafeToDestroy> => this.client.safeToDestroy(ids, call);
  poolCreate = (name: string, pgNum: number, call?: CallOptions): Promise<T.Created> => this.client.poolCreate(name, pgNum, call);
  fsNew = (name: string, meta: string, data: string, call?: CallOptions): Promise<T.Created> => this.client.fsNew(name, meta, data, call);
  osdNew = (uuid: string, opts?: T.OsdNewOptions & CallOptions): Promise<number> => this.client.osdNew(uuid, opts);
  osdOut = (ids: number[], call?: CallOptions): Promise<void> => this.client.osdOut(ids, call);
  osdIn = (ids: number[], call?: CallOptions): Promise<void> => this.client.osdIn(ids, call);
  osdDestroy = (id: number, call?: CallOptions): Promise<void> => this.client.osdDestroy(id, call);
  osdPurge = (id: number, call?: CallOptions): Promise<T.Removed> => this.client.osdPurge(id, call);
  osdDf = (call?: CallOptions): Promise<T.OsdDf[]> => this.client.osdDf(call);
  osdDfOf = (id: number, call?: CallOptions): Promise<T.OsdDf | null> => this.client.osdDfOf(id, call);
  authGetOrCreate = (entity: string, caps: Record<string, string>, call?: CallOptions): Promise<T.AuthEntity> =>
    this.client.authGetOrCreate(entity, caps, call);
  authGet = (entity: string, call?: CallOptions): Promise<T.AuthEntity | undefined> => this.client.authGet(entity, call);
  authImport = (keyring: string, call?: CallOptions & { as?: CallAs }): Promise<void> => this.client.authImport(keyring, call);
  monGetmap = (file: string, call?: CallOptions): Promise<{ epoch?: number }> => this.client.monGetmap(file, call);
  monRemove = (name: string, call?: CallOptions): Promise<T.MonRemoved> => this.client.monRemove(name, call);
  osdOkToStop = (ids: number[], call?: CallOptions): Promise<OsdStopReport> => this.client.osdOkToStop(ids, call);
  monOkToStop = (names: string[], call?: CallOptions): Promise<MonStopReport> => this.client.monOkToStop(names, call);
  mdsOkToStop = (names: string[], call?: CallOptions): Promise<MdsStopReport> => this.client.mdsOkToStop(names, call);
  osdSetGroup = (flags: OsdGroupFlag[], who: string[], call?: CallOptions): Promise<OsdGroupFlagsResult> =>
    this.client.osdSetGroup(flags, who, call);
  osdUnsetGroup = (flags: OsdGroupFlag[], who: string[], call?: CallOptions): Promise<OsdGroupFlagsResult> =>
    this.client.osdUnsetGroup(flags, who, call);
  osdNoout = (call?: CallOptions): Promise<NooutState> => this.client.osdNoout(call);

  crushAddBucket = (name: string, type: string, call?: CallOptions): Promise<T.Created> => this.client.crushAddBucket(name, type, call);
  crushMove = (name: string, location: string[], call?: CallOptions): Promise<{ moved: boolean }> =>
    this.client.crushMove(name, location, call);
  crushRuleCreateReplicated = (
    rule: { name: string; root: string; failureDomain: string; deviceClass?: string },
    call?: CallOptions,
  ): Promise<T.Created> => this.client.crushRuleCreateReplicated(rule, call);
  crushRuleDump = (call?: CallOptions): Promise<CrushRule[]> => this.client.crushRuleDump(call);
  poolSetCrushRule = (pool: string, rule: string, call?: CallOptions): Promise<void> => this.client.poolSetCrushRule(pool, rule, call);
  poolRules = (call?: CallOptions): Promise<PoolRule[]> => this.client.poolRules(call);

  // Beyond the pick: the other read-only verbs the real client has, for metrics and tests.
  osdStat = (call?: CallOptions): Promise<T.OsdStat> => this.client.osdStat(call);
  pgStat = (call?: CallOptions): Promise<T.PgStat> => this.client.pgStat(call);
  monStat = (call?: CallOptions): Promise<T.MonStat> => this.client.monStat(call);
  fsDump = (call?: CallOptions): Promise<T.MdsStat> => this.client.fsDump(call);
  fsStatus = (call?: CallOptions): Promise<FsStatus> => this.client.fsStatus(call);
  versions = (call?: CallOptions): Promise<T.CephVersions> => this.client.versions(call);
}

export class SimRgwApi implements RgwApi {
  readonly runner: SimCephRunner;
  readonly admin: RgwAdmin;

  constructor(
    readonly cluster: SimCephCluster,
    opts: SimApiOptions = {},
  ) {
    this.runner = new SimCephRunner(cluster, opts);
    this.admin = new RgwAdmin({
      runner: this.runner,
      conf: opts.conf ?? CONF,
      name: opts.name ?? 'client.admin',
      ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }),
    });
  }

  userCreate = (u: RgwUserCreate, call?: CallOptions): Promise<RgwUser> => this.admin.userCreate(u, call);
  userInfo = (uid: string, call?: CallOptions): Promise<RgwUser | undefined> => this.admin.userInfo(uid, call);
  bucketStats = (uid: string, call?: CallOptions): Promise<RgwBucketUsage[]> => this.admin.bucketStats(uid, call);
  userRm = (uid: string, call?: CallOptions): Promise<{ removed: boolean }> => this.admin.userRm(uid, call);
}
