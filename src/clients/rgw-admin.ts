// The typed `radosgw-admin` CLI (RGW users). It talks to RADOS directly, so it needs the
// cluster's conf and an admin key, not a running radosgw. A secret key given to Quarry goes
// to the runner as a SecretArg (masked in every log and error); the keys in the answer are
// returned to the caller and never logged here.
import { CommandError } from '../errors.js';
import type { Arg, Runner } from '../exec/runner.js';
import { ERRNO } from './ceph-gates.js';
import { arr, int, obj, OutputParser, shape, str } from './ceph-output.js';
import type { CallOptions } from './ceph.js';

export interface RgwAdminOptions {
  runner: Runner;
  conf: string;
  name?: string;
  keyring?: string;
  /** Deadline of every call; default 30 s. */
  timeoutMs?: number;
  /** The binary; default `radosgw-admin`. */
  command?: string;
}

export interface RgwKey {
  user: string;
  accessKey: string;
  /** Never log it. */
  secretKey: string;
}

export interface RgwUser {
  userId: string;
  displayName: string;
  /** Absent when the user has none (radosgw-admin prints ""). */
  email?: string;
  suspended: boolean;
  keys: RgwKey[];
}

export interface RgwUserCreate {
  uid: string;
  displayName: string;
  email?: string;
  /** Both or neither: without them RGW generates a pair. */
  accessKey?: string;
  secretKey?: string;
}

/** A bucket of a user, with what `bucket stats` says it holds. */
export interface RgwBucketUsage {
  bucket: string;
  objects: number;
  bytes: number;
}

interface RawBucketStats {
  bucket: string;
  usage: Record<string, { size?: number; num_objects?: number }>;
}
const bucketStatsShape = shape<RawBucketStats[]>(
  'rgw-bucket-stats',
  arr({ type: 'object', required: ['bucket', 'usage'], properties: { bucket: str, usage: { type: 'object' } } }),
);

interface RawRgwUser {
  user_id: string;
  display_name: string;
  email: string;
  suspended: number;
  keys: { user: string; access_key: string; secret_key: string }[];
}
const userShape = shape<RawRgwUser>(
  'rgw-user',
  obj({
    user_id: str,
    display_name: str,
    email: str,
    suspended: int,
    keys: arr(obj({ user: str, access_key: str, secret_key: str })),
  }),
);

export class RgwAdmin {
  private readonly out = new OutputParser();
  private readonly timeoutMs: number;
  private readonly command: string;

  constructor(private readonly opts: RgwAdminOptions) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.command = opts.command ?? 'radosgw-admin';
  }

  /** The full argument array: global flags, --format json, then the verb. */
  args(verb: Arg[]): Arg[] {
    const out: Arg[] = ['-c', this.opts.conf];
    if (this.opts.name !== undefined) out.push('-n', this.opts.name);
    if (this.opts.keyring !== undefined) out.push('-k', this.opts.keyring);
    return [...out, '--format', 'json', ...verb];
  }

  /** Creates a user. One that exists already is an EEXIST (17) CommandError, even with the
   * same arguments: call userInfo first. */
  async userCreate(u: RgwUserCreate, call?: CallOptions): Promise<RgwUser> {
    if ((u.accessKey === undefined) !== (u.secretKey === undefined)) {
      throw new TypeError('userCreate: give both accessKey and secretKey, or neither');
    }
    const verb: Arg[] = ['user', 'create', `--uid=${u.uid}`, `--display-name=${u.displayName}`];
    if (u.email !== undefined) verb.push(`--email=${u.email}`);
    if (u.accessKey !== undefined && u.secretKey !== undefined) {
      verb.push(`--access-key=${u.accessKey}`, '--secret-key', { secret: u.secretKey });
    }
    return this.user(verb, call);
  }

  /** The user, or undefined when RGW has none by that id. */
  async userInfo(uid: string, call?: CallOptions): Promise<RgwUser | undefined> {
    try {
      return await this.user(['user', 'info', `--uid=${uid}`], call);
    } catch (err) {
      // Pacific answers a missing user with EINVAL and this message, not ENOENT.
      if (err instanceof CommandError && isNoSuchUser(err)) return undefined;
      throw err;
    }
  }

  /** `bucket stats --uid`: the user's buckets with their objects and bytes (`rgw.main`; an
   * empty bucket has no usage entry). A user RGW does not know has none. */
  async bucketStats(uid: string, call?: CallOptions): Promise<RgwBucketUsage[]> {
    const verb: Arg[] = ['bucket', 'stats', `--uid=${uid}`];
    try {
      const { stdout } = await this.opts.runner.run(this.command, this.args(verb), this.runOpts(call));
      return this.out.parse(`${this.command} bucket stats --uid=${uid}`, stdout, bucketStatsShape).map((b) => ({
        bucket: b.bucket,
        objects: b.usage['rgw.main']?.num_objects ?? 0,
        bytes: b.usage['rgw.main']?.size ?? 0,
      }));
    } catch (err) {
      if (err instanceof CommandError && isNoSuchUser(err)) return [];
      throw err;
    }
  }

  /** `user rm --uid --purge-data`: the user, its keys, and its buckets with every object in them.
   * One RGW does not know is success (`removed: false`). */
  async userRm(uid: string, call?: CallOptions): Promise<{ removed: boolean }> {
    try {
      await this.opts.runner.run(this.command, this.args(['user', 'rm', `--uid=${uid}`, '--purge-data']), this.runOpts(call));
      return { removed: true };
    } catch (err) {
      if (err instanceof CommandError && isNoSuchUser(err)) return { removed: false };
      throw err;
    }
  }

  private runOpts(call: CallOptions | undefined): { timeoutMs: number; signal?: AbortSignal } {
    return { timeoutMs: call?.timeoutMs ?? this.timeoutMs, ...(call?.signal ? { signal: call.signal } : {}) };
  }

  private async user(verb: Arg[], call: CallOptions | undefined): Promise<RgwUser> {
    const timeoutMs = call?.timeoutMs ?? this.timeoutMs;
    const { stdout } = await this.opts.runner.run(this.command, this.args(verb), {
      timeoutMs,
      ...(call?.signal ? { signal: call.signal } : {}),
    });
    // Only the verb and the uid name the command in errors; never a key.
    const shown = [this.command, ...verb.slice(0, 3).map((a) => (typeof a === 'string' ? a : '***'))].join(' ');
    return toUser(this.out.parse(shown, stdout, userShape));
  }
}

const isNoSuchUser = (err: CommandError): boolean =>
  (err.exitCode === ERRNO.EINVAL || err.exitCode === ERRNO.ENOENT) && /no user info saved|does not exist/.test(err.stderr);

function toUser(raw: RawRgwUser): RgwUser {
  const out: RgwUser = {
    userId: raw.user_id,
    displayName: raw.display_name,
    suspended: raw.suspended !== 0,
    keys: raw.keys.map((k) => ({ user: k.user, accessKey: k.access_key, secretKey: k.secret_key })),
  };
  if (raw.email !== '') out.email = raw.email;
  return out;
}
