// S3 against a RADOS gateway, through the AWS SDK for JavaScript v3: path-style addresses (a
// gateway has no wildcard DNS), region us-east-1 (what RGW accepts by default), the caller's own
// key pair, a deadline on every call. The gateway's refusals become Quarry's error classes; the
// secret key is never part of a message.
import type * as SdkModule from '@aws-sdk/client-s3';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { AuthError, ConflictError, ForbiddenError, InputError, NotFoundError, QuarryError, ServiceUnavailableError } from '../errors.js';
import type { BucketEntry, ListObjectsRequest, ObjectPage, S3Credentials, S3Session } from '../model/s3.js';

export const S3_REGION = 'us-east-1';

type Sdk = typeof SdkModule;
/** Loaded at the first S3 call, not at start-up: 3 MB of heap, and its code, that a master
 * serving no /s3 request does not need. */
const sdk = (): Promise<Sdk> => import('@aws-sdk/client-s3');

// The SDK warns once, on stderr and over several lines, that its releases after January 2027
// need Node 22; Quarry's stderr is one JSON line per event, and the lock file pins the release.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export interface S3ClientOptions {
  /** Deadline of one call, connection included. */
  timeoutMs?: number;
}

/** The SDK configuration Quarry uses for a gateway; tests build their direct clients with it. */
export function s3ClientConfig(endpoint: string, credentials: S3Credentials, opts: S3ClientOptions = {}): S3ClientConfig {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  return {
    endpoint,
    region: S3_REGION,
    forcePathStyle: true,
    credentials: { accessKeyId: credentials.accessKey, secretAccessKey: credentials.secretKey },
    // Ceph 16's gateway knows neither the CRC checksums nor the aws-chunked trailers that newer
    // SDKs send by default; only where S3 requires a checksum is one sent.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // Quarry tries the next gateway itself; the SDK's own retries would only delay that answer.
    maxAttempts: 1,
    requestHandler: { connectionTimeout: Math.min(timeoutMs, 5_000), requestTimeout: timeoutMs },
  };
}

const unquote = (etag: string | undefined): string => (etag ?? '').replace(/^"(.*)"$/, '$1');
const iso = (d: Date | undefined): string => (d ?? new Date(0)).toISOString();

/** What the gateway's answer means for the caller; anything that is not an S3 answer is a
 * gateway that did not answer. */
export function s3Failure(err: unknown, what: string, where: string, ServiceException: Sdk['S3ServiceException']): QuarryError {
  if (!(err instanceof ServiceException)) {
    const why = err instanceof Error && ['TimeoutError', 'AbortError'].includes(err.name) ? 'no answer in time' : 'no answer';
    return new ServiceUnavailableError(`the RADOS gateway ${where} could not ${what}: ${why}`, 'CLUSTER_UNAVAILABLE');
  }
  const code = err.name;
  switch (code) {
    case 'SignatureDoesNotMatch':
    case 'InvalidAccessKeyId':
    case 'RequestTimeTooSkewed':
      return new AuthError(`the RADOS gateway refused the S3 key pair (${code})`);
    case 'AccessDenied':
      return new ForbiddenError(`the RADOS gateway denied this to the key pair's user: ${what}`);
    case 'NoSuchBucket':
      return new NotFoundError(`no bucket of that name: ${what}`);
    case 'BucketAlreadyExists':
    case 'BucketAlreadyOwnedByYou':
      return new ConflictError(`the bucket name is taken: ${what}`, 'BUCKET_EXISTS');
    case 'InvalidBucketName':
      return new InputError(`the RADOS gateway refused the bucket name: ${what}`, [
        { path: '/body/name', message: 'not a valid bucket name' },
      ]);
    default: {
      const status = err.$metadata.httpStatusCode ?? 500;
      if (status >= 400 && status < 500) return new QuarryError(`the RADOS gateway refused to ${what} (${code})`, status, 'S3_REFUSED');
      return new ServiceUnavailableError(`the RADOS gateway ${where} failed to ${what} (${code})`, 'CLUSTER_UNAVAILABLE');
    }
  }
}

export class SdkS3Session implements S3Session {
  private readonly config: S3ClientConfig;
  private readonly timeoutMs: number;
  private readonly where: string;

  constructor(endpoint: string, credentials: S3Credentials, opts: S3ClientOptions = {}) {
    this.config = s3ClientConfig(endpoint, credentials, opts);
    this.timeoutMs = opts.timeoutMs ?? 15_000;
    this.where = `at ${new URL(endpoint).host}`;
  }

  async listBuckets(): Promise<BucketEntry[]> {
    const out = await this.send('list buckets', (c, m) => c.send(new m.ListBucketsCommand({}), this.call()));
    return (out.Buckets ?? []).map((b) => ({ name: b.Name ?? '', creationDate: iso(b.CreationDate) }));
  }

  async createBucket(name: string): Promise<void> {
    await this.send(`create bucket ${name}`, (c, m) => c.send(new m.CreateBucketCommand({ Bucket: name }), this.call()));
  }

  async listObjects(bucket: string, req: ListObjectsRequest): Promise<ObjectPage> {
    const input = {
      Bucket: bucket,
      MaxKeys: req.maxKeys,
      ...(req.prefix ? { Prefix: req.prefix } : {}),
      ...(req.continuationToken ? { ContinuationToken: req.continuationToken } : {}),
    };
    const out = await this.send(`list the objects of bucket ${bucket}`, (c, m) => c.send(new m.ListObjectsV2Command(input), this.call()));
    const truncated = out.IsTruncated === true;
    return {
      objects: (out.Contents ?? []).map((o) => ({
        key: o.Key ?? '',
        size: o.Size ?? 0,
        lastModified: iso(o.LastModified),
        etag: unquote(o.ETag),
      })),
      isTruncated: truncated,
      continuationToken: truncated ? (out.NextContinuationToken ?? null) : null,
    };
  }

  async deleteObject(bucket: string, key: string): Promise<void> {
    await this.send(`delete an object of bucket ${bucket}`, (c, m) =>
      c.send(new m.DeleteObjectCommand({ Bucket: bucket, Key: key }), this.call()),
    );
  }

  private call(): { abortSignal: AbortSignal } {
    return { abortSignal: AbortSignal.timeout(this.timeoutMs) };
  }

  /** One client per call: it holds the caller's secret, which Quarry keeps no longer than that. */
  private async send<T>(what: string, op: (client: S3Client, m: Sdk) => Promise<T>): Promise<T> {
    const m = await sdk();
    const client = new m.S3Client(this.config);
    try {
      return await op(client, m);
    } catch (err) {
      throw s3Failure(err, what, this.where, m.S3ServiceException);
    } finally {
      client.destroy();
    }
  }
}

export const connectS3 =
  (opts: S3ClientOptions = {}) =>
  (endpoint: string, credentials: S3Credentials): S3Session =>
    new SdkS3Session(endpoint, credentials, opts);
