// The S3 operations Quarry offers under /s3, as the HTTP layer needs them: a session with one
// RADOS gateway, signed with the caller's own RGW key pair. src/clients/s3.ts implements it over
// the AWS SDK; the composition root decides which gateway endpoint a session talks to.

/** An RGW user's key pair, as the caller sent it. The secret never goes into a log or an error. */
export interface S3Credentials {
  accessKey: string;
  secretKey: string;
}

export interface BucketEntry {
  name: string;
  /** ISO 8601. */
  creationDate: string;
}

export interface ObjectEntry {
  key: string;
  size: number;
  /** ISO 8601. */
  lastModified: string;
  /** Without the quotes S3 puts around it. */
  etag: string;
}

export interface ObjectPage {
  objects: ObjectEntry[];
  isTruncated: boolean;
  /** The token for the next page; null on the last one. */
  continuationToken: string | null;
}

export interface ListObjectsRequest {
  prefix?: string;
  continuationToken?: string;
  maxKeys: number;
}

/** One gateway, one caller. Errors are Quarry's classes: 401 for keys the gateway refuses,
 * 404 for a bucket it does not know, 409 for a name taken, 503 when it does not answer. */
export interface S3Session {
  listBuckets(): Promise<BucketEntry[]>;
  /** Creating a bucket the caller already owns succeeds, as it does in RGW. */
  createBucket(name: string): Promise<void>;
  listObjects(bucket: string, req: ListObjectsRequest): Promise<ObjectPage>;
  /** Deleting a key that is not there succeeds, as it does in S3. */
  deleteObject(bucket: string, key: string): Promise<void>;
}

/** A gateway's S3 address: its node and `http://<ip>:<port>` (what radosgw listens on). */
export interface GatewayAddress {
  hostname: string;
  ip: string;
  port: number;
}

export type S3Connect = (endpoint: string, credentials: S3Credentials) => S3Session;

/** S3's rules for new bucket names (virtual-host safe): 3–63 of a-z, 0-9, '.', '-', starting
 * and ending with a letter or digit. RGW accepts these; the API refuses others with 400. */
export const BUCKET_NAME_PATTERN = '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$';

export const MAX_KEYS_LIMIT = 1000;
export const DEFAULT_MAX_KEYS = 200;
