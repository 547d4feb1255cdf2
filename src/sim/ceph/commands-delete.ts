// The verbs of data-bearing deletions, as Ceph 16 answers them: `fs fail`, `fs rm`,
// `osd pool rm` (guarded by mon_allow_pool_delete and by the filesystems using the pool), the
// `config get|set|rm` that lifts that guard, and radosgw-admin's `bucket stats` and `user rm`.
import type { SimCephCluster } from './cluster.js';
import { CephRefusal } from './errors.js';
// The parts of commands.ts' context, reply and command these verbs use (not imported:
// commands.ts imports this).
interface CommandContext {
  cluster: SimCephCluster;
  args: string[];
  json: boolean;
}
interface Reply {
  stdout: string;
  stderr?: string;
}
interface Command {
  verb: string[];
  run(x: CommandContext): Reply;
}

const word = (x: CommandContext, i: number, what: string): string => {
  const w = x.args[i];
  if (w === undefined) throw new CephRefusal('EINVAL', `missing required parameter ${what}`);
  return w;
};
/** As recorded (--format json): one newline on stdout, the human line on stderr. */
const said = (stderr: string): Reply => ({ stdout: '\n', stderr: stderr ? `${stderr}\n` : '' });

/** Options the sim knows the defaults of. */
const DEFAULTS: Record<string, string> = { mon_allow_pool_delete: 'false' };
/** Ceph's config section of the monitors (`ceph config set mon ...`). */
const MONS = 'mon'; // catalogue-exempt: Ceph's config section, not Quarry's daemon

export function configValue(c: SimCephCluster, who: string, key: string): string | undefined {
  return c.config.get(`${who} ${key}`) ?? DEFAULTS[key];
}

function fsFail(x: CommandContext): Reply {
  const name = word(x, 0, 'fs_name');
  const fs = x.cluster.fsmap.get(name);
  if (!fs) throw new CephRefusal('ENOENT', `Filesystem not found: '${name}'`);
  x.cluster.fsmap.fail(fs);
  return said(`${name} marked not joinable; MDS cannot join the cluster. All MDS ranks marked failed.`);
}

function fsRm(x: CommandContext): Reply {
  const name = word(x, 0, 'fs_name');
  const fs = x.cluster.fsmap.get(name);
  if (!fs) return said(`filesystem '${name}' does not exist`);
  // Recorded: an MDS serving it is refused before the missing flag is.
  if (x.cluster.fsmap.activeFor(fs))
    throw new CephRefusal('EINVAL', 'all MDS daemons must be inactive/failed before removing filesystem. See `ceph fs fail`.');
  if (!x.args.includes('--yes-i-really-mean-it'))
    throw new CephRefusal(
      'EPERM',
      'this is a DESTRUCTIVE operation and will make data in your filesystem permanently inaccessible.  Add --yes-i-really-mean-it if you are sure you wish to continue.',
    );
  x.cluster.fsmap.remove(fs);
  return said('');
}

function poolRm(x: CommandContext): Reply {
  const [name, again] = [word(x, 0, 'pool'), x.args[1]];
  const pool = x.cluster.osdmap.poolByName(name);
  if (!pool) return said(`pool '${name}' does not exist`);
  if (again !== name || !x.args.includes('--yes-i-really-really-mean-it'))
    throw new CephRefusal(
      'EPERM',
      `WARNING: this will *PERMANENTLY DESTROY* all data stored in pool ${name}.  If you are *ABSOLUTELY CERTAIN* that is what you want, pass the pool name *twice*, followed by --yes-i-really-really-mean-it.`,
    );
  if (x.cluster.fsmap.filesystems.some((f) => f.metadataPool === pool.id || f.dataPools.includes(pool.id)))
    throw new CephRefusal('EBUSY', `pool '${name}' is in use by CephFS`);
  if (configValue(x.cluster, MONS, 'mon_allow_pool_delete') !== 'true')
    throw new CephRefusal(
      'EPERM',
      'pool deletion is disabled; you must first set the mon_allow_pool_delete config option to true before you can destroy a pool',
    );
  x.cluster.osdmap.removePool(pool);
  return said(`pool '${name}' removed`);
}

function configGet(x: CommandContext): Reply {
  const [who, key] = [word(x, 0, 'who'), word(x, 1, 'key')];
  const v = configValue(x.cluster, who, key);
  if (v === undefined) throw new CephRefusal('ENOENT', `unrecognized key '${key}'`);
  const typed = v === 'true' || v === 'false' ? v === 'true' : v;
  // Recorded: a newline, then the value as JSON.
  return x.json ? { stdout: `\n${JSON.stringify(typed)}\n` } : { stdout: `${v}\n` };
}

function configSet(x: CommandContext): Reply {
  const [who, key, value] = [word(x, 0, 'who'), word(x, 1, 'name'), word(x, 2, 'value')];
  x.cluster.config.set(`${who} ${key}`, value);
  return { stdout: '\n' };
}

function configRm(x: CommandContext): Reply {
  x.cluster.config.delete(`${word(x, 0, 'who')} ${word(x, 1, 'name')}`);
  return { stdout: '\n' };
}

export const DELETE_COMMANDS: Command[] = [
  { verb: ['fs', 'fail'], run: fsFail },
  { verb: ['fs', 'rm'], run: fsRm },
  // catalogue-exempt: Ceph's CLI verb
  { verb: ['osd', 'pool', 'rm'], run: poolRm },
  { verb: ['config', 'get'], run: configGet },
  { verb: ['config', 'set'], run: configSet },
  { verb: ['config', 'rm'], run: configRm },
];

/** `--uid=X` or `--uid X`. */
function uid(args: string[]): string {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a.startsWith('--uid=')) return a.slice(6);
    if (a === '--uid' && args[i + 1] !== undefined) return args[i + 1] as string;
  }
  throw new CephRefusal('EINVAL', 'no user id specified');
}

/** Pretty JSON as radosgw-admin prints it; an empty bucket has no `rgw.main` usage. */
function bucketStats(x: CommandContext): Reply {
  const owner = uid(x.args);
  x.cluster.accounts.user(owner);
  const out = x.cluster.buckets.owned(owner).map((b) => {
    const size = [...b.objects.values()].reduce((n, o) => n + o.body.length, 0);
    const main = { size, size_actual: size, size_utilized: size, size_kb: Math.ceil(size / 1024), num_objects: b.objects.size };
    return { bucket: b.name, owner, usage: b.objects.size > 0 ? { 'rgw.main': main } : {} };
  });
  return { stdout: `${JSON.stringify(out, null, 4)}\n` };
}

/** `user rm --uid [--purge-data]`: a user that still owns buckets needs --purge-data. */
function userRm(x: CommandContext): Reply {
  const owner = uid(x.args);
  if (!x.cluster.accounts.rgwUsers.has(owner))
    throw new CephRefusal('ENOENT', 'could not remove user: unable to remove user, user does not exist');
  const owns = x.cluster.buckets.owned(owner).length > 0;
  if (owns && !x.args.includes('--purge-data'))
    throw new CephRefusal('EEXIST', 'could not remove user: unable to remove user, must specify purge data to remove user with buckets');
  x.cluster.buckets.purgeOwner(owner);
  x.cluster.accounts.removeUser(owner);
  return { stdout: '' };
}

export const RGW_DELETE_COMMANDS: Command[] = [
  { verb: ['bucket', 'stats'], run: bucketStats },
  { verb: ['user', 'rm'], run: userRm },
];
