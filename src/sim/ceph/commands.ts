// The `ceph` and `radosgw-admin` verbs the simulated cluster answers, each as the real CLI
// does: JSON on stdout, the human line on stderr, the same exit codes. Verbs served by the
// mgr (df, pg stat, ok-to-stop, safe-to-destroy, fs status) are marked: without an active mgr
// the real CLI waits for one, and so does the runner.
import { keyringText } from '../../clients/keyring.js';
import type { SimCephCluster } from './cluster.js';
import { CephRefusal } from './errors.js';
import { isCephxKey, parseKeyring } from './keys.js';
import type { DeviceClass } from './model.js';
import { hasActiveClean } from './placement.js';
import * as C from './commands-crush.js';
import { DELETE_COMMANDS } from './commands-delete.js';
import * as R from './render-maps.js';
import * as S from './render-status.js';

export interface Reply {
  stdout: string;
  stderr?: string;
  exitCode?: number;
}

export interface CommandContext {
  cluster: SimCephCluster;
  /** The entity the CLI authenticated as (`-n`). */
  caller: string;
  /** The words after the verb. */
  args: string[];
  input: string | undefined;
  json: boolean;
  writeFile(path: string, data: Uint8Array): Promise<void>;
}

export interface Command {
  verb: string[];
  mgr?: boolean;
  run(ctx: CommandContext): Reply | Promise<Reply>;
}

const json = (value: unknown, stderr = ''): Reply => ({ stdout: `${JSON.stringify(value)}\n`, stderr });
const word = (ctx: CommandContext, i: number, what: string): string => {
  const w = ctx.args[i];
  if (w === undefined) throw new CephRefusal('EINVAL', `missing required parameter ${what}`);
  return w;
};
const osdIds = (ctx: CommandContext): number[] =>
  ctx.args.map((a) => {
    const id = Number(a.replace(/^osd\./, ''));
    if (!Number.isInteger(id) || id < 0) throw new CephRefusal('EINVAL', `invalid osd id value '${a}'`);
    return id;
  });

export const CEPH_COMMANDS: Command[] = [
  { verb: ['status'], run: (x) => json(S.rawStatus(x.cluster)) },
  { verb: ['health'], run: (x) => json(S.rawHealth(x.cluster.health(), x.args[0] === 'detail')) },
  { verb: ['df'], mgr: true, run: (x) => json(S.rawDf(x.cluster)) },
  { verb: ['pg', 'stat'], mgr: true, run: (x) => json(S.rawPgStat(x.cluster)) },
  { verb: ['versions'], run: (x) => json(S.rawVersions(x.cluster)) },
  { verb: ['mon', 'dump'], run: (x) => json(R.rawMonDump(x.cluster), `dumped monmap epoch ${x.cluster.mons.epoch}\n`) },
  { verb: ['mon', 'stat'], run: (x) => json(R.rawMonStat(x.cluster)) },
  { verb: ['quorum_status'], run: (x) => json(R.rawQuorumStatus(x.cluster)) },
  { verb: ['mgr', 'stat'], run: (x) => json(R.rawMgrStat(x.cluster)) },
  { verb: ['mon', 'getmap'], run: monGetmap },
  { verb: ['mon', 'remove'], run: monRemove },
  { verb: ['osd', 'tree'], run: (x) => json(R.rawOsdTree(x.cluster)) },
  { verb: ['osd', 'stat'], run: (x) => json(R.rawOsdStat(x.cluster)) },
  { verb: ['osd', 'dump'], run: (x) => json(R.rawOsdDump(x.cluster), `dumped osdmap epoch ${x.cluster.osdmap.epoch}\n`) },
  {
    verb: ['osd', 'pool', 'ls'],
    run: (x) => json(x.args[0] === 'detail' ? R.rawPoolLs(x.cluster) : [...x.cluster.osdmap.pools.values()].map((p) => p.name)),
  },
  { verb: ['osd', 'pool', 'create'], run: poolCreate },
  { verb: ['osd', 'safe-to-destroy'], mgr: true, run: safeToDestroy },
  { verb: ['osd', 'new'], run: osdNew },
  { verb: ['osd', 'out'], run: osdOut },
  { verb: ['osd', 'in'], run: osdIn },
  { verb: ['osd', 'destroy'], run: osdDestroy },
  { verb: ['osd', 'purge'], run: osdPurge },
  { verb: ['osd', 'df'], mgr: true, run: osdDf },
  { verb: ['osd', 'crush', 'add-bucket'], run: C.crushAddBucket },
  { verb: ['osd', 'crush', 'move'], run: C.crushMove },
  { verb: ['osd', 'crush', 'rule', 'create-replicated'], run: C.crushRuleCreate },
  { verb: ['osd', 'crush', 'rule', 'dump'], run: (x) => json(R.rawRuleDump(x.cluster)) },
  { verb: ['osd', 'pool', 'set'], run: C.poolSet },
  { verb: ['fs', 'new'], run: fsNew },
  { verb: ['fs', 'ls'], run: (x) => json(R.rawFsLs(x.cluster)) },
  { verb: ['fs', 'dump'], run: (x) => json(R.rawFsDump(x.cluster), `dumped fsmap epoch ${x.cluster.fsmap.epoch}\n`) },
  { verb: ['mds', 'stat'], run: (x) => json(R.rawMdsStat(x.cluster)) },
  { verb: ['fs', 'status'], mgr: true, run: (x) => json(R.rawFsStatus(x.cluster)) },
  { verb: ['auth', 'get-or-create'], run: authGetOrCreate },
  { verb: ['auth', 'get'], run: authGet },
  { verb: ['auth', 'import'], run: authImport },
  ...DELETE_COMMANDS,
];

/** A small header with the epoch, then the map as JSON: stable bytes, not Ceph's encoding. */
async function monGetmap(x: CommandContext): Promise<Reply> {
  const i = x.args.indexOf('-o');
  const file = x.args[i + 1];
  if (i < 0 || file === undefined) throw new CephRefusal('EINVAL', 'mon getmap: this sim writes the map to a file: give -o FILE');
  const header = Buffer.alloc(12);
  header.write('QSIMMMAP', 0, 'latin1');
  header.writeUInt32LE(x.cluster.mons.epoch, 8);
  await x.writeFile(file, Buffer.concat([header, Buffer.from(JSON.stringify(R.rawMonmap(x.cluster)))]));
  return { stdout: '', stderr: `got monmap epoch ${x.cluster.mons.epoch}\n` };
}

/** As recorded from Ceph 16: a removal prints nothing, an absent monitor is success with a
 * note, the last one is refused (EINVAL). */
function monRemove(x: CommandContext): Reply {
  const name = word(x, 0, 'name');
  const { removed } = x.cluster.removeMonFromMap(name);
  return { stdout: '\n', stderr: removed ? '' : `mon.${name} does not exist or has already been removed\n` };
}

function poolCreate(x: CommandContext): Reply {
  const name = word(x, 0, 'pool');
  const pgNum = x.args[1] === undefined ? undefined : Number(x.args[1]);
  const { created } = x.cluster.createPool(name, pgNum);
  return { stdout: '\n', stderr: `pool '${name}' ${created ? 'created' : 'already exists'}\n` };
}

/** DaemonServer's verdict (Ceph 16): an OSD in any PG's up or acting set is "active" (an out
 * OSD stays acting until its PGs have moved off, or for good when they have nowhere to go);
 * while some PG is not active+clean, a down OSD or one without stats is "missing_stats"; else
 * safe. With --format json the verdict is exit 0 either way, as recorded. */
function safeToDestroy(x: CommandContext): Reply {
  const pgs = x.cluster.pgs();
  const unknown = pgs.filter((pg) => pg.state === 'unknown').length;
  if (unknown > 0) throw new CephRefusal('EAGAIN', `${unknown} pgs have unknown state; cannot draw any conclusions`);
  const allClean = pgs.every((pg) => hasActiveClean(pg.state));
  const out = { safe_to_destroy: [] as number[], active: [] as number[], missing_stats: [] as number[], stored_pgs: [] as number[] };
  for (const id of osdIds(x)) {
    const o = x.cluster.osdmap.osds.get(id);
    if (!o) out.safe_to_destroy.push(id);
    else if (pgs.some((pg) => pg.acting.includes(id) || pg.up.includes(id))) out.active.push(id);
    // (stored_pgs needs an up OSD outside every PG that still reports PGs: not in this model.)
    else if (!allClean && (!o.booted || !o.up)) out.missing_stats.push(id);
    else out.safe_to_destroy.push(id);
  }
  return json(out);
}

const CLASSES: readonly string[] = ['hdd', 'ssd', 'nvme'] satisfies DeviceClass[];

function osdNew(x: CommandContext): Reply {
  const uuid = word(x, 0, 'uuid');
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(uuid))
    throw new CephRefusal('EINVAL', `invalid uuid '${uuid}'`);
  const rest = x.args.slice(1).filter((a, i, all) => a !== '-i' && all[i - 1] !== '-i');
  const id = rest[0] === undefined ? undefined : Number(rest[0]);
  if (id !== undefined && (!Number.isInteger(id) || id < 0)) throw new CephRefusal('EINVAL', `invalid osd id value '${rest[0]}'`);
  let cephxSecret: string | undefined;
  let deviceClass: DeviceClass | undefined;
  if (x.input !== undefined && x.input.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(x.input);
    } catch {
      throw new CephRefusal('EINVAL', 'unable to parse input data as json');
    }
    const body = (parsed ?? {}) as { cephx_secret?: unknown; crush_device_class?: unknown };
    if (body.cephx_secret !== undefined) {
      if (typeof body.cephx_secret !== 'string' || !isCephxKey(body.cephx_secret))
        throw new CephRefusal('EINVAL', 'unable to decode cephx_secret');
      cephxSecret = body.cephx_secret;
    }
    if (body.crush_device_class !== undefined) {
      const c = body.crush_device_class;
      if (typeof c !== 'string' || !CLASSES.includes(c))
        throw new CephRefusal('EINVAL', `the lab's Ceph knows device classes ${CLASSES.join(', ')}`);
      deviceClass = c as DeviceClass;
    }
  }
  const osdid = x.cluster.createOsd(uuid, {
    ...(id === undefined ? {} : { id }),
    ...(cephxSecret === undefined ? {} : { cephxSecret }),
    ...(deviceClass === undefined ? {} : { deviceClass }),
  });
  return { stdout: `\n${JSON.stringify({ osdid })}`, stderr: '' };
}

/** What the mon prints for out/in/destroy/purge: stdout is one newline under --format json
 * (empty without), the human words on stderr, exit 0 for an id that does not exist. */
const said = (x: CommandContext, stderr: string): Reply => ({ stdout: x.json ? '\n' : '', stderr: `${stderr}\n` });

/** `osd df [plain|tree] [FILTER]`: tree mode is not simulated (Quarry reads the plain list). */
function osdDf(x: CommandContext): Reply {
  const [first, ...rest] = x.args;
  const filter = first === 'plain' ? rest[0] : first;
  if (first === 'tree') throw new CephRefusal('EINVAL', 'osd df tree: not simulated by the lab');
  return json(R.rawOsdDf(x.cluster, filter));
}

function osdOut(x: CommandContext): Reply {
  const words = osdIds(x).map((id) => {
    const o = x.cluster.osdmap.osds.get(id);
    if (!o) return `osd.${id} does not exist. `;
    if (!o.in) return `osd.${id} is already out. `;
    x.cluster.markOut(id);
    return `marked out osd.${id}. `;
  });
  return said(x, words.join(''));
}

function osdIn(x: CommandContext): Reply {
  const words = osdIds(x).map((id) => {
    const o = x.cluster.osdmap.osds.get(id);
    if (!o) return `osd.${id} does not exist. `;
    if (o.in) return `osd.${id} is already in. `;
    x.cluster.markIn(id);
    return `marked in osd.${id}. `;
  });
  return said(x, words.join(''));
}

/** `osd destroy osd.N --yes-i-really-mean-it`: again is success ("destroyed osd.N" again). */
function osdDestroy(x: CommandContext): Reply {
  const [id] = osdIds({ ...x, args: x.args.filter((a) => !a.startsWith('--')) });
  if (id === undefined) throw new CephRefusal('EINVAL', 'missing required parameter id');
  if (!x.args.includes('--yes-i-really-mean-it')) throw new CephRefusal('EPERM', `Are you SURE? ... pass --yes-i-really-mean-it.`);
  if (!x.cluster.osdmap.osds.has(id)) return said(x, `osd.${id} does not exist`);
  x.cluster.destroyOsdKeepingId(id);
  return said(x, `destroyed osd.${id}`);
}

/** `osd purge osd.N --yes-i-really-mean-it`: id, CRUSH entry and key gone; again is success. */
function osdPurge(x: CommandContext): Reply {
  const [id] = osdIds({ ...x, args: x.args.filter((a) => !a.startsWith('--')) });
  if (id === undefined) throw new CephRefusal('EINVAL', 'missing required parameter id');
  if (!x.args.includes('--yes-i-really-mean-it')) throw new CephRefusal('EPERM', `Are you SURE? ... pass --yes-i-really-mean-it.`);
  if (!x.cluster.osdmap.osds.has(id)) return said(x, `osd.${id} does not exist`);
  x.cluster.purgeOsd(id);
  return said(x, `purged osd.${id}`);
}

function fsNew(x: CommandContext): Reply {
  const [name, meta, data] = [word(x, 0, 'fs_name'), word(x, 1, 'metadata'), word(x, 2, 'data')];
  const { created, fs } = x.cluster.newFs(name, meta, data);
  const stderr = created
    ? `new fs with metadata pool ${fs.metadataPool} and data pool ${fs.dataPools[0]}\n`
    : `filesystem '${name}' already exists\n`;
  return { stdout: '\n', stderr };
}

function authGetOrCreate(x: CommandContext): Reply {
  const entity = word(x, 0, 'entity');
  const words = x.args.slice(1);
  if (words.length % 2 !== 0) throw new CephRefusal('EINVAL', 'caps must come in pairs of service and cap');
  const caps: Record<string, string> = {};
  for (let i = 0; i < words.length; i += 2) caps[words[i] as string] = words[i + 1] as string;
  const e = x.cluster.accounts.getOrCreate(entity, caps);
  // Plain output is the keyring without caps; JSON carries them.
  return x.json ? json([e]) : { stdout: keyringText(e, { withCaps: false }) };
}

function authGet(x: CommandContext): Reply {
  const e = x.cluster.accounts.get(word(x, 0, 'entity'));
  const stderr = `exported keyring for ${e.entity}\n`;
  return x.json ? json([e], stderr) : { stdout: keyringText(e), stderr };
}

/** `auth import -i FILE|-`: needs `mon 'allow *'` (client.admin, or `mon.` before client.admin
 * is in the cluster); prints "imported keyring" on stderr, as Ceph 16 does. */
function authImport(x: CommandContext): Reply {
  const caller = x.cluster.accounts.entities.get(x.caller);
  if (caller?.caps.mon !== 'allow *') throw new CephRefusal('EACCES', 'access denied');
  if (x.input === undefined || x.input.trim() === '') throw new CephRefusal('EINVAL', 'auth import: no keyring given (-i FILE)');
  let entities;
  try {
    entities = parseKeyring(x.input);
  } catch (err) {
    throw new CephRefusal('EINVAL', err instanceof Error ? err.message : 'unable to read the keyring');
  }
  x.cluster.accounts.importKeyring(entities);
  return { stdout: '', stderr: 'imported keyring\n' };
}
