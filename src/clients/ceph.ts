// The typed `ceph` CLI: one method per verb Quarry uses, each with --format json, its stdout
// parsed and checked (rook's client/mon.go). Failures of the command itself stay the runner's
// CommandError (stderr kept for logs); output Quarry cannot read is a CommandOutputError.
// Nothing here logs: stdout can carry cephx keys, so no onLine is ever passed to the runner.
import { CommandError } from '../errors.js';
import type { Runner, RunOutput } from '../exec/runner.js';
import { checkOsdIds, ERRNO, gateRefusal, okToStopFrom, safeToDestroyFrom, safeToDestroyRefused } from './ceph-gates.js';
import * as X from './ceph-crush.js';
import * as M from './ceph-map.js';
import { CommandOutputError, OutputParser, type Shape } from './ceph-output.js';
import * as S from './ceph-schemas.js';
import * as O from './ceph-schemas-osd.js';
import type * as T from './ceph-types.js';
import * as G from './ceph-stop-gates.js';

export interface CephClientOptions {
  runner: Runner;
  /** Path of the ceph.conf to use (`-c`). */
  conf: string;
  /** Entity to authenticate as (`-n`), e.g. client.admin or client.bootstrap-osd. */
  name?: string;
  /** Keyring path (`-k`); without it Ceph uses the conf's keyring setting. */
  keyring?: string;
  /** Deadline of every call; default 30 s. */
  timeoutMs?: number;
  /** `--connect-timeout`; default 20 s, and always short of the deadline so the CLI gives up
   * with its own message before the runner kills it. */
  connectTimeoutSec?: number;
  /** The binary; default `ceph`. */
  command?: string;
}

/** Per-call overrides. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** Another cephx identity for one call: its name (`-n`) and a keyring file holding its key. */
export interface CallAs {
  name: string;
  keyring: string;
}

// One import for callers: the result types, the output error and the keyring renderer.
export * from './ceph-types.js';
export { CommandOutputError } from './ceph-output.js';
export type { FsStatus } from './ceph-map.js';
export type { CrushRule, PoolRule } from './ceph-crush.js';
export { keyringFile, keyringText } from './keyring.js';
export type { MdsStopReport, MonStopReport, NooutState, OsdGroupFlag, OsdGroupFlagsResult, OsdStopReport } from './ceph-stop-gates.js';

export const CEPH_DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_CONNECT_TIMEOUT_SEC = 20;

export class CephClient {
  private readonly out = new OutputParser();
  private readonly timeoutMs: number;
  private readonly command: string;

  constructor(private readonly opts: CephClientOptions) {
    this.timeoutMs = opts.timeoutMs ?? CEPH_DEFAULT_TIMEOUT_MS;
    this.command = opts.command ?? 'ceph';
  }

  /** The full argument array for a verb: global flags first, then the verb. */
  args(verb: string[], timeoutMs = this.timeoutMs, as?: CallAs): string[] {
    const connect = this.opts.connectTimeoutSec ?? Math.max(1, Math.min(DEFAULT_CONNECT_TIMEOUT_SEC, Math.floor(timeoutMs / 1000) - 1));
    const out = ['-c', this.opts.conf, '--connect-timeout', String(connect)];
    const [name, keyring] = as ? [as.name, as.keyring] : [this.opts.name, this.opts.keyring];
    if (name !== undefined) out.push('-n', name);
    if (keyring !== undefined) out.push('-k', keyring);
    return [...out, '--format', 'json', ...verb];
  }

  // ---- cluster ------------------------------------------------------------------------------
  status = (call?: CallOptions): Promise<T.CephStatus> => this.query(['status'], S.statusShape, M.toStatus, call);
  /** `health detail`: the checks with their per-item lines. */
  health = (call?: CallOptions): Promise<T.CephHealth> => this.query(['health', 'detail'], S.healthShape, M.toHealth, call);
  df = (call?: CallOptions): Promise<T.CephDf> => this.query(['df'], S.dfShape, M.toDf, call);
  pgStat = (call?: CallOptions): Promise<T.PgStat> =>
    this.query(
      ['pg', 'stat'],
      S.pgStatShape,
      (r) => ({
        ready: r.pg_ready,
        numPgs: r.pg_summary.num_pgs,
        pgStates: r.pg_summary.num_pg_by_state.map((s) => ({ state: s.name, count: s.num })),
      }),
      call,
    );
  versions = (call?: CallOptions): Promise<T.CephVersions> => this.query(['versions'], S.versionsShape, M.toVersions, call);

  // ---- mon / mgr ----------------------------------------------------------------------------
  monDump = (call?: CallOptions): Promise<T.MonDump> => this.query(['mon', 'dump'], S.monDumpShape, M.toMonDump, call);
  monStat = (call?: CallOptions): Promise<T.MonStat> =>
    this.query(
      ['mon', 'stat'],
      S.monStatShape,
      (r) => ({
        epoch: r.epoch,
        numMons: r.num_mons,
        leader: r.leader,
        quorum: r.quorum.map((q) => ({ rank: q.rank, name: q.name })),
      }),
      call,
    );
  quorumStatus = (call?: CallOptions): Promise<T.QuorumStatus> =>
    this.query(['quorum_status'], S.quorumStatusShape, M.toQuorumStatus, call);
  mgrStat = (call?: CallOptions): Promise<T.MgrStat> =>
    this.query(
      ['mgr', 'stat'],
      S.mgrStatShape,
      (r) => ({
        epoch: r.epoch,
        available: r.available,
        activeName: r.active_name,
        numStandby: r.num_standby,
      }),
      call,
    );

  /** Removes a monitor from the monmap. One that is not in it is success (`removed: false`),
   * as Ceph answers (exit 0, a note on stderr; a removal says nothing); the last monitor is
   * refused (EINVAL CommandError). Quorum is the caller's gate: Ceph does not check it. */
  async monRemove(name: string, call?: CallOptions): Promise<T.MonRemoved> {
    const { stderr } = await this.run(['mon', 'remove', name], call);
    return { removed: !/does not exist or has already been removed/.test(stderr) };
  }

  /** Writes the binary monmap to `file` (stdout stays empty); the epoch comes from stderr. */
  async monGetmap(file: string, call?: CallOptions): Promise<{ epoch?: number }> {
    const { stderr } = await this.run(['mon', 'getmap', '-o', file], call);
    const epoch = /got monmap epoch (\d+)/.exec(stderr)?.[1];
    return epoch === undefined ? {} : { epoch: Number(epoch) };
  }

  // ---- OSDs and pools -----------------------------------------------------------------------
  osdTree = (call?: CallOptions): Promise<T.OsdTree> => this.query(['osd', 'tree'], O.osdTreeShape, M.toOsdTree, call);
  osdStat = (call?: CallOptions): Promise<T.OsdStat> =>
    this.query(
      ['osd', 'stat'],
      O.osdStatShape,
      (r) => ({
        epoch: r.epoch,
        numOsds: r.num_osds,
        numUpOsds: r.num_up_osds,
        numInOsds: r.num_in_osds,
        numRemappedPgs: r.num_remapped_pgs,
      }),
      call,
    );
  osdDump = (call?: CallOptions): Promise<T.OsdDump> => this.query(['osd', 'dump'], O.osdDumpShape, M.toOsdDump, call);
  poolList = (call?: CallOptions): Promise<T.Pool[]> =>
    this.query(['osd', 'pool', 'ls', 'detail'], O.poolLsShape, (r) => r.map(M.toPool), call);

  /** Whether stopping these OSDs now keeps every PG available. "No" is a value. */
  async okToStop(ids: number[], call?: CallOptions): Promise<T.OkToStop> {
    checkOsdIds('okToStop', ids);
    const verb = ['osd', 'ok-to-stop', ...ids.map(String)];
    try {
      return okToStopFrom(this.parse(verb, (await this.run(verb, call)).stdout, O.okToStopShape));
    } catch (err) {
      const reason = gateRefusal(err);
      if (reason === undefined) throw err;
      return { ok: false, reason, osds: ids };
    }
  }

  /** Whether these OSDs can be destroyed without losing data. "No" is a value. */
  async safeToDestroy(ids: number[], call?: CallOptions): Promise<T.SafeToDestroy> {
    checkOsdIds('safeToDestroy', ids);
    const verb = ['osd', 'safe-to-destroy', ...ids.map(String)];
    try {
      return safeToDestroyFrom(ids, this.parse(verb, (await this.run(verb, call)).stdout, O.safeToDestroyShape));
    } catch (err) {
      const reason = gateRefusal(err);
      if (reason === undefined) throw err;
      return safeToDestroyRefused(reason);
    }
  }

  /** Creates a pool; one that already exists is success (`created: false`). Ceph does not
   * compare pg counts or types of an existing pool. */
  async poolCreate(name: string, pgNum: number, call?: CallOptions): Promise<T.Created> {
    const { stderr } = await this.run(['osd', 'pool', 'create', name, String(pgNum)], call);
    return { created: !/already exists/.test(stderr) };
  }

  /** `osd pool rm NAME NAME --yes-i-really-really-mean-it`: the pool and every object in it go.
   * One that does not exist is success (`removed: false`, exit 0 "does not exist"). Ceph refuses
   * while mon_allow_pool_delete is false (EPERM "pool deletion is disabled") and a pool a
   * filesystem uses (EBUSY "in use by CephFS"). */
  async poolRm(name: string, call?: CallOptions): Promise<T.Removed> {
    const { stderr } = await this.run(['osd', 'pool', 'rm', name, name, '--yes-i-really-really-mean-it'], call);
    return { removed: !/does not exist/.test(stderr) };
  }

  /** `config get WHO KEY`: the value as Ceph prints it (`true`, `false`, a number as text). */
  async configGet(who: string, key: string, call?: CallOptions): Promise<string> {
    const verb = ['config', 'get', who, key];
    const raw = this.parse(verb, (await this.run(verb, call)).stdout, O.configValueShape);
    return String(raw);
  }
  /** `config set WHO KEY VALUE` in the monitors' config database. */
  async configSet(who: string, key: string, value: string, call?: CallOptions): Promise<void> {
    await this.run(['config', 'set', who, key, value], call);
  }
  /** `config rm WHO KEY`: back to the default; one that is not set is success. */
  async configRm(who: string, key: string, call?: CallOptions): Promise<void> {
    await this.run(['config', 'rm', who, key], call);
  }

  /** Registers a new OSD id for `uuid`; the same uuid again returns the same id. `id` reuses
   * a destroyed OSD's id (and CRUSH position); a live id is EINVAL ("id N already in use and
   * does not match uuid ..."). The cephx secret and the CRUSH device class travel as JSON on
   * stdin, never on the command line. Recorded on Ceph 16: the class is taken by a fresh OSD
   * but ignored for a reused id, which keeps the class CRUSH has for it. */
  async osdNew(uuid: string, opts: T.OsdNewOptions & CallOptions = {}): Promise<number> {
    const body: Record<string, string> = {};
    if (opts.cephxSecret !== undefined) body.cephx_secret = opts.cephxSecret;
    if (opts.deviceClass !== undefined) body.crush_device_class = opts.deviceClass;
    const withInput = Object.keys(body).length > 0;
    const verb = ['osd', 'new', uuid, ...(opts.id === undefined ? [] : [String(opts.id)]), ...(withInput ? ['-i', '-'] : [])];
    return this.parse(verb, (await this.run(verb, opts, withInput ? JSON.stringify(body) : undefined)).stdout, O.osdNewShape).osdid;
  }

  /** Marks OSDs out: their PGs are mapped elsewhere and their data moves off (the OSD stays in
   * their acting sets until it has). One already out, or an id that does not exist, is
   * success, as Ceph answers (exit 0, "osd.N is already out." / "osd.N does not exist."). */
  async osdOut(ids: number[], call?: CallOptions): Promise<void> {
    checkOsdIds('osdOut', ids);
    await this.run(['osd', 'out', ...ids.map(String)], call);
  }

  /** Marks OSDs in again (a removal undone before it was purged); already in is success. */
  async osdIn(ids: number[], call?: CallOptions): Promise<void> {
    checkOsdIds('osdIn', ids);
    await this.run(['osd', 'in', ...ids.map(String)], call);
  }

  /** `osd destroy`: the OSD's key and data are forgotten, its id and CRUSH position kept
   * (marked destroyed, uuid zeroed, out) for a replacement. Ceph refuses an OSD that is up
   * (EBUSY "osd.N is not `down`."); a destroyed one again, or an id that does not exist, is
   * success. Ceph 16 does not ask safe-to-destroy here: the caller's gate did. */
  async osdDestroy(id: number, call?: CallOptions): Promise<void> {
    checkOsdIds('osdDestroy', [id]);
    await this.run(['osd', 'destroy', `osd.${id}`, '--yes-i-really-mean-it'], call);
  }

  /** `osd purge`: the OSD's id, CRUSH entry and key are gone. One that does not exist is
   * success (`removed: false`); an up one is refused (EBUSY). */
  async osdPurge(id: number, call?: CallOptions): Promise<T.Removed> {
    checkOsdIds('osdPurge', [id]);
    const { stderr } = await this.run(['osd', 'purge', `osd.${id}`, '--yes-i-really-mean-it'], call);
    return { removed: !/does not exist/.test(stderr) };
  }

  /** Per-OSD usage (`osd df`): PGs and bytes on each. Recorded on Ceph 16: an OSD marked out
   * reports zero bytes at once (the mgr drops an out OSD's stats) while `pgs` still counts the
   * PGs it serves until they have moved off: a drain's progress is `pgs`, not the bytes. */
  osdDf = (call?: CallOptions): Promise<T.OsdDf[]> => this.query(['osd', 'df'], O.osdDfShape, M.toOsdDf, call);

  /** `osd df plain osd.N`: the one OSD's row, as in `osdDf` (a drain asks this each recheck: the
   * whole list is every OSD of the cluster). Null when CRUSH no longer has it (purged): Ceph
   * answers EINVAL "not a pool, crush node or device class name" (recorded on 16.2.15). */
  async osdDfOf(id: number, call?: CallOptions): Promise<T.OsdDf | null> {
    checkOsdIds('osdDfOf', [id]);
    try {
      const rows = await this.query(['osd', 'df', 'plain', `osd.${id}`], O.osdDfShape, M.toOsdDf, call);
      return rows.find((r) => r.id === id) ?? null;
    } catch (err) {
      if (err instanceof CommandError && err.exitCode === ERRNO.EINVAL && /not a pool, crush node/.test(err.stderr)) return null;
      throw err;
    }
  }

  // ---- CephFS -------------------------------------------------------------------------------
  /** Creates a filesystem; the same name over the same pools again is success. */
  async fsNew(name: string, metadataPool: string, dataPool: string, call?: CallOptions): Promise<T.Created> {
    const { stderr } = await this.run(['fs', 'new', name, metadataPool, dataPool], call);
    return { created: !/already exists/.test(stderr) };
  }
  /** `fs fail`: the filesystem is marked not joinable and its ranks failed, which `fs rm`
   * needs (Ceph 16 refuses to remove a filesystem with an MDS up: EINVAL "all MDS daemons must
   * be inactive/failed"). One that does not exist is success (`removed: false`), though Ceph
   * answers ENOENT "Not found". */
  async fsFail(name: string, call?: CallOptions): Promise<T.Removed> {
    try {
      await this.run(['fs', 'fail', name], call);
      return { removed: true };
    } catch (err) {
      if (err instanceof CommandError && err.exitCode === ERRNO.ENOENT) return { removed: false };
      throw err;
    }
  }
  /** `fs rm NAME --yes-i-really-mean-it`: the filesystem goes, its pools stay. One that does
   * not exist is success (`removed: false`), as Ceph answers (exit 0, "does not exist"). */
  async fsRm(name: string, call?: CallOptions): Promise<T.Removed> {
    const { stderr } = await this.run(['fs', 'rm', name, '--yes-i-really-mean-it'], call);
    return { removed: !/does not exist/.test(stderr) };
  }
  fsList = (call?: CallOptions): Promise<T.FsListEntry[]> =>
    this.query(
      ['fs', 'ls'],
      O.fsLsShape,
      (r) =>
        r.map((f) => ({
          name: f.name,
          metadataPool: f.metadata_pool,
          metadataPoolId: f.metadata_pool_id,
          dataPools: f.data_pools,
          dataPoolIds: f.data_pool_ids,
        })),
      call,
    );
  mdsStat = (call?: CallOptions): Promise<T.MdsStat> => this.query(['mds', 'stat'], O.mdsStatShape, (r) => M.toMdsStat(r.fsmap), call);
  fsDump = (call?: CallOptions): Promise<T.MdsStat> => this.query(['fs', 'dump'], O.fsDumpShape, M.toMdsStat, call);
  fsStatus = (call?: CallOptions): Promise<M.FsStatus> => this.query(['fs', 'status'], O.fsStatusShape, M.toFsStatus, call);

  // ---- auth ---------------------------------------------------------------------------------
  /** The entity's key, created with `caps` if missing. Existing with other caps is an
   * EINVAL CommandError ("... exists but cap osd does not match"): use `auth caps` for that. */
  async authGetOrCreate(entity: string, caps: Record<string, string>, call?: CallOptions): Promise<T.AuthEntity> {
    const verb = ['auth', 'get-or-create', entity, ...Object.entries(caps).flat()];
    return this.authEntity(verb, call);
  }

  /** The entity's key and caps; undefined when Ceph has no such entity. */
  async authGet(entity: string, call?: CallOptions): Promise<T.AuthEntity | undefined> {
    try {
      return await this.authEntity(['auth', 'get', entity], call);
    } catch (err) {
      if (err instanceof CommandError && err.exitCode === ERRNO.ENOENT) return undefined;
      throw err;
    }
  }

  /**
   * `auth import`: every entity of `keyring` (key and caps) goes into the auth database; one
   * that exists takes the imported key and caps, so importing the same keyring again changes
   * nothing. The keyring travels on stdin, never on the command line. `as` calls as another
   * entity: right after the first monitor's mkfs, client.admin is not in the cluster yet and
   * the master imports it as `mon.` (whose caps are `mon 'allow *'`).
   */
  async authImport(keyring: string, call?: CallOptions & { as?: CallAs }): Promise<void> {
    await this.run(['auth', 'import', '-i', '-'], call, keyring, call?.as);
  }

  private async authEntity(verb: string[], call: CallOptions | undefined): Promise<T.AuthEntity> {
    const [first] = this.parse(verb, (await this.run(verb, call)).stdout, O.authShape);
    // minItems: 1 in the schema; the check satisfies noUncheckedIndexedAccess.
    if (!first) throw new CommandOutputError(this.shown(verb), 'empty array');
    return { entity: first.entity, key: first.key, caps: first.caps };
  }

  // ---- CRUSH (ceph-crush.ts) ----------------------------------------------------------------
  private readonly crush: X.CrushPlumbing = {
    run: (verb, call) => this.run(verb, call),
    parse: (verb, stdout, s) => this.parse(verb, stdout, s),
  };
  crushAddBucket = (name: string, type: string, call?: CallOptions): Promise<T.Created> => X.addBucket(this.crush, name, type, call);
  crushMove = (name: string, location: string[], call?: CallOptions): Promise<{ moved: boolean }> =>
    X.move(this.crush, name, location, call);
  crushRuleCreateReplicated = (
    rule: { name: string; root: string; failureDomain: string; deviceClass?: string },
    call?: CallOptions,
  ): Promise<T.Created> => X.ruleCreateReplicated(this.crush, rule, call);
  crushRuleDump = (call?: CallOptions): Promise<X.CrushRule[]> => X.ruleDump(this.crush, call);
  poolSetCrushRule = (pool: string, rule: string, call?: CallOptions): Promise<void> => X.poolSetRule(this.crush, pool, rule, call);
  poolRules = (call?: CallOptions): Promise<X.PoolRule[]> => X.poolRules(this.crush, call);

  // ---- plumbing -----------------------------------------------------------------------------
  private async query<Raw, Out>(verb: string[], s: Shape<Raw>, map: (raw: Raw) => Out, call?: CallOptions): Promise<Out> {
    const { stdout } = await this.run(verb, call);
    return map(this.parse(verb, stdout, s));
  }

  private parse<Raw>(verb: string[], stdout: string, s: Shape<Raw>): Raw {
    return this.out.parse(this.shown(verb), stdout, s);
  }

  private shown = (verb: string[]): string => [this.command, ...verb].join(' ');

  private run(verb: string[], call: CallOptions | undefined, input?: string, as?: CallAs): Promise<RunOutput> {
    const timeoutMs = call?.timeoutMs ?? this.timeoutMs;
    return this.opts.runner.run(this.command, this.args(verb, timeoutMs, as), {
      timeoutMs,
      ...(call?.signal ? { signal: call.signal } : {}),
      ...(input === undefined ? {} : { input }),
    });
  }

  // ---- stop gates and noout (ceph-stop-gates.ts) --------------------------------------------
  /** `osd ok-to-stop` for a set of OSDs, with the PGs that would go inactive or degraded. "No"
   * (EBUSY) and "cannot tell" (EAGAIN) are values; ids are checked before any call. */
  async osdOkToStop(ids: number[], call?: CallOptions): Promise<G.OsdStopReport> {
    checkOsdIds('osdOkToStop', ids);
    return G.osdOkToStop(this.stopVerbs, ids, call);
  }
  /** `mon ok-to-stop`: whether the quorum left would still be a majority of the monmap. */
  async monOkToStop(names: string[], call?: CallOptions): Promise<G.MonStopReport> {
    G.checkNames('monOkToStop', names);
    return G.monOkToStop(this.stopVerbs, names, call);
  }
  /** `mds ok-to-stop`: whether every active MDS among them has a standby to take over. */
  async mdsOkToStop(names: string[], call?: CallOptions): Promise<G.MdsStopReport> {
    G.checkNames('mdsOkToStop', names);
    return G.mdsOkToStop(this.stopVerbs, names, call);
  }
  /** `osd set-group FLAGS WHO...`: WHO are `osd.N` names or CRUSH nodes (a host). Setting what
   * is set is success; an unknown OSD is reported in `missing`; an unknown node is EINVAL. */
  async osdSetGroup(flags: G.OsdGroupFlag[], who: string[], call?: CallOptions): Promise<G.OsdGroupFlagsResult> {
    G.checkGroupFlags('osdSetGroup', flags);
    G.checkNames('osdSetGroup', who);
    return G.osdGroupFlags(this.stopVerbs, 'set-group', flags, who, call);
  }
  /** `osd unset-group FLAGS WHO...`; clearing what is clear is success. */
  async osdUnsetGroup(flags: G.OsdGroupFlag[], who: string[], call?: CallOptions): Promise<G.OsdGroupFlagsResult> {
    G.checkGroupFlags('osdUnsetGroup', flags);
    G.checkNames('osdUnsetGroup', who);
    return G.osdGroupFlags(this.stopVerbs, 'unset-group', flags, who, call);
  }
  /** Which OSDs carry noout (their own flag, a CRUSH node's or the cluster's): `osd dump` + `osd tree`. */
  async osdNoout(call?: CallOptions): Promise<G.NooutState> {
    const dump = ['osd', 'dump'];
    const flags = this.parse(dump, (await this.run(dump, call)).stdout, G.osdFlagsShape);
    const treeVerb = ['osd', 'tree'];
    const tree = this.parse(treeVerb, (await this.run(treeVerb, call)).stdout, O.osdTreeShape);
    return G.nooutFrom(flags, tree);
  }

  /** run and parse for ceph-stop-gates.ts; stdout lines are collected only into memory (an
   * ok-to-stop report says which PGs, and a refusal's report is on stdout only). */
  private readonly stopVerbs: G.Verbs = {
    run: (verb, call, onStdout) => {
      const timeoutMs = call?.timeoutMs ?? this.timeoutMs;
      return this.opts.runner.run(this.command, this.args(verb, timeoutMs), {
        timeoutMs,
        ...(call?.signal ? { signal: call.signal } : {}),
        ...(onStdout
          ? {
              onLine: (stream: 'stdout' | 'stderr', line: string) => {
                if (stream === 'stdout') onStdout(line);
              },
            }
          : {}),
      });
    },
    parse: (verb, stdout, s) => this.parse(verb, stdout, s),
  };
}
