// What the lab's RADOS gateways store: buckets with their owner and objects, shared by every
// gateway of the cluster (in Ceph it lives in RADOS pools, not in a gateway). Semantics follow
// RGW: a user sees and lists only its own buckets, re-creating a bucket one owns succeeds, a name
// another user holds is BucketAlreadyExists, and deleting an absent key succeeds.
import { createHash } from 'node:crypto';
import { S3Fault, accessDenied, noSuchBucket } from './fault.js';

export interface SimObject {
  key: string;
  body: Buffer;
  /** MD5 hex of the body, as S3 gives it for a single-part upload (without quotes). */
  etag: string;
  contentType: string;
  lastModified: Date;
}

export interface SimBucket {
  name: string;
  owner: string;
  createdAt: Date;
  objects: Map<string, SimObject>;
}

export interface ListPage {
  contents: SimObject[];
  truncated: boolean;
  /** Opaque to clients: where the next page starts. */
  nextToken: string | null;
}

/** RGW's default (rgw_relaxed_s3_bucket_names = false): S3's DNS-compatible names, not an IP. */
const VALID_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const IP_LIKE = /^\d+\.\d+\.\d+\.\d+$/;
/** rgw_max_listing_results. */
export const MAX_LISTING = 1000;

const token = (key: string): string => Buffer.from(key, 'utf8').toString('base64url');

function fromToken(t: string): string {
  const key = Buffer.from(t, 'base64url').toString('utf8');
  if (t === '' || token(key) !== t) throw new S3Fault('InvalidArgument', 400, 'The continuation token provided is incorrect');
  return key;
}

export class SimBuckets {
  private readonly buckets = new Map<string, SimBucket>();

  constructor(private readonly now: () => number = Date.now) {}

  create(owner: string, name: string): void {
    if (!VALID_NAME.test(name) || IP_LIKE.test(name) || name.includes('..')) {
      throw new S3Fault('InvalidBucketName', 400, 'The specified bucket is not valid.', { BucketName: name });
    }
    const known = this.buckets.get(name);
    if (known && known.owner !== owner)
      throw new S3Fault('BucketAlreadyExists', 409, 'The requested bucket name is not available.', { BucketName: name });
    if (!known) this.buckets.set(name, { name, owner, createdAt: new Date(this.now()), objects: new Map() });
  }

  owned(owner: string): SimBucket[] {
    return [...this.buckets.values()].filter((b) => b.owner === owner).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /** The bucket, when it exists and `owner` owns it. */
  bucket(owner: string, name: string): SimBucket {
    const b = this.buckets.get(name);
    if (!b) throw noSuchBucket(name);
    if (b.owner !== owner) throw accessDenied();
    return b;
  }

  /** `radosgw-admin user rm --purge-data`: every bucket of `owner`, objects and all. */
  purgeOwner(owner: string): number {
    const mine = this.owned(owner);
    for (const b of mine) this.buckets.delete(b.name);
    return mine.length;
  }

  remove(owner: string, name: string): void {
    const b = this.bucket(owner, name);
    if (b.objects.size > 0) throw new S3Fault('BucketNotEmpty', 409, 'The bucket you tried to delete is not empty', { BucketName: name });
    this.buckets.delete(name);
  }

  put(owner: string, bucket: string, key: string, body: Buffer, contentType: string): SimObject {
    const b = this.bucket(owner, bucket);
    const o: SimObject = { key, body, etag: createHash('md5').update(body).digest('hex'), contentType, lastModified: new Date(this.now()) };
    b.objects.set(key, o);
    return o;
  }

  get(owner: string, bucket: string, key: string): SimObject {
    const o = this.bucket(owner, bucket).objects.get(key);
    if (!o) throw new S3Fault('NoSuchKey', 404, 'The specified key does not exist.', { Key: key });
    return o;
  }

  delete(owner: string, bucket: string, key: string): void {
    this.bucket(owner, bucket).objects.delete(key);
  }

  /** ListObjectsV2: keys in byte order after the token (or `startAfter`), under `prefix`. */
  list(owner: string, bucket: string, q: { prefix: string; maxKeys: number; continuationToken?: string; startAfter?: string }): ListPage {
    const b = this.bucket(owner, bucket);
    const after = q.continuationToken !== undefined ? fromToken(q.continuationToken) : (q.startAfter ?? '');
    const keys = [...b.objects.keys()].filter((k) => k.startsWith(q.prefix) && byBytes(k, after) > 0).sort(byBytes);
    const max = Math.min(Math.max(q.maxKeys, 0), MAX_LISTING);
    const page = keys.slice(0, max);
    const truncated = keys.length > page.length;
    const last = page[page.length - 1];
    return {
      contents: page.map((k) => b.objects.get(k) as SimObject),
      truncated,
      nextToken: truncated && last !== undefined ? token(last) : null,
    };
  }
}

/** S3 lists keys in UTF-8 binary order. */
function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
