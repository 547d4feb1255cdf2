// `radosgw-admin user create|info` against the simulated cluster. radosgw-admin talks to
// RADOS itself, so it needs quorum but no running radosgw; like the real one it creates the
// zone's pools if they are missing. It prints pretty JSON and bare error lines (no "Error X:").
import { Daemon } from '../../catalogue/index.js';
import type { SimCephCluster } from './cluster.js';
import { CephRefusal } from './errors.js';
import type { SimRgwUser } from './model.js';
import type { Command, CommandContext, Reply } from './commands.js';
import { RGW_DELETE_COMMANDS } from './commands-delete.js';

const quota = { enabled: false, check_on_raw: false, max_size: -1, max_size_kb: 0, max_objects: -1 };

export function rawRgwUser(u: SimRgwUser): Record<string, unknown> {
  return {
    user_id: u.uid,
    display_name: u.displayName,
    email: u.email,
    suspended: 0,
    max_buckets: 1000,
    subusers: [],
    keys: u.keys.map((k) => ({ user: u.uid, access_key: k.accessKey, secret_key: k.secretKey })),
    swift_keys: [],
    caps: [],
    op_mask: 'read, write, delete',
    default_placement: '',
    default_storage_class: '',
    placement_tags: [],
    bucket_quota: quota,
    user_quota: quota,
    temp_url_keys: [],
    type: Daemon.rgw,
    mfa_ids: [],
  };
}

const pretty = (u: SimRgwUser): Reply => ({ stdout: `${JSON.stringify(rawRgwUser(u), null, 4)}\n\n` });

/** `--name=value` or `--name value`. */
function flag(args: string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3);
    if (a === `--${name}`) return args[i + 1];
  }
  return undefined;
}

function uid(x: CommandContext): string {
  const id = flag(x.args, 'uid');
  if (id === undefined || id === '') throw new CephRefusal('EINVAL', 'no user id specified');
  return id;
}

function ensurePools(c: SimCephCluster): void {
  c.workloads.rgwPools();
}

export const RGW_COMMANDS: Command[] = [
  {
    verb: ['user', 'create'],
    run: (x) => {
      ensurePools(x.cluster);
      const email = flag(x.args, 'email');
      const accessKey = flag(x.args, 'access-key');
      const secretKey = flag(x.args, 'secret-key');
      return pretty(
        x.cluster.accounts.createUser({
          uid: uid(x),
          displayName: flag(x.args, 'display-name') ?? '',
          ...(email === undefined ? {} : { email }),
          ...(accessKey === undefined ? {} : { accessKey }),
          ...(secretKey === undefined ? {} : { secretKey }),
        }),
      );
    },
  },
  { verb: ['user', 'info'], run: (x) => pretty(x.cluster.accounts.user(uid(x))) },
  ...RGW_DELETE_COMMANDS,
];
