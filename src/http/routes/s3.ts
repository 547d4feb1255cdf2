// The S3 operations (docs/api-conventions.md, "S3"): buckets and objects of the caller's RGW user, served by
// a running RADOS gateway and signed with the key pair the caller sends instead of a session.
// Where the gateways are is the address the leader's Fleet saw their agents report from (never an
// agent's own word, services/s3.ts): a follower has none, so it relays them (`leader`).
import { BUCKET_NAME_PATTERN, DEFAULT_MAX_KEYS, MAX_KEYS_LIMIT, type ListObjectsRequest, type S3Credentials } from '../../model/s3.js';
import { route, type AnyRoute } from '../route.js';
import type { S3Service } from '../../services/s3.js';
import { object, statusSchema } from '../schemas.js';

// S3's bucket naming rules, checked before any call to a gateway: a name the SDK or the gateway
// would refuse or read as something else (a/b, .., NUL, an address) is the caller's 400.
const notAddressNorDots = '(?!\\d{1,3}(\\.\\d{1,3}){3}$)(?!.*\\.\\.)(?!.*\\.-)(?!.*-\\.)';
const bucketName = {
  type: 'string',
  pattern: `^${notAddressNorDots}${BUCKET_NAME_PATTERN.slice(1)}`,
  description: "3–63 of a-z, 0-9, '.' and '-', starting and ending with a letter or digit; no '..', '.-' or '-.', not an IPv4 address",
};
// An existing bucket's name: the same characters; as short as one, as buckets from before the
// length rule may be.
const bucketParam = object(
  {
    bucket: {
      type: 'string',
      minLength: 1,
      maxLength: 63,
      pattern: `^${notAddressNorDots}([a-z0-9]|[a-z0-9][a-z0-9.-]*[a-z0-9])$`,
      description: "a-z, 0-9, '.' and '-', up to 63",
    },
  },
  ['bucket'],
);
// S3's limit is 1024 bytes of UTF-8; NUL is no part of a key.
const noNul = '^[^\\u0000]*$';
const objectKey = { type: 'string', minLength: 1, maxLength: 1024, pattern: noNul, description: 'up to 1024 characters, no NUL' };

const bucketView = object({ name: { type: 'string' }, creationDate: { type: 'string', format: 'date-time' } }, ['name', 'creationDate']);
const objectView = object(
  {
    key: { type: 'string' },
    size: { type: 'integer' },
    lastModified: { type: 'string', format: 'date-time' },
    etag: { type: 'string', description: 'without quotes' },
  },
  ['key', 'size', 'lastModified', 'etag'],
);
const pageView = object(
  {
    objects: { type: 'array', items: objectView },
    isTruncated: { type: 'boolean' },
    continuationToken: { type: ['string', 'null'], description: 'pass it back for the next page; null on the last page' },
  },
  ['objects', 'isTruncated', 'continuationToken'],
);

type ListQuery = Partial<ListObjectsRequest>;

/** The route layer sets `s3` on every route declared `s3: true`. */
const keys = (s3: S3Credentials | null): S3Credentials => {
  if (!s3) throw new Error('an s3 route was called without its key pair');
  return s3;
};

export function s3Routes(service: S3Service): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/s3/buckets',
      leader: true,
      tags: ['s3'],
      s3: true,
      summary: "The buckets of the key pair's RGW user",
      response: { description: 'buckets, in the order the gateway lists them', schema: { type: 'array', items: bucketView } },
      handler: ({ s3 }) => service.with(keys(s3), (gw) => gw.listBuckets()),
    }),
    route<{ name: string }>({
      method: 'POST',
      path: '/s3/buckets',
      leader: true,
      tags: ['s3'],
      s3: true,
      summary:
        "Create a bucket owned by the key pair's RGW user. Creating one it already owns succeeds; a name another user holds is 409 BUCKET_EXISTS",
      body: object({ name: bucketName }, ['name']),
      response: { description: 'created (or owned by this user already)', schema: statusSchema('created') },
      errors: [409],
      handler: async ({ s3, body }) => {
        await service.with(keys(s3), (gw) => gw.createBucket(body.name));
        return { status: 'created' };
      },
    }),
    route<unknown, ListQuery, { bucket: string }>({
      method: 'GET',
      path: '/s3/buckets/{bucket}/objects',
      leader: true,
      tags: ['s3'],
      s3: true,
      summary: 'One page of the objects of a bucket, in key order; an unknown bucket is 404',
      params: bucketParam,
      query: object({
        prefix: { type: 'string', maxLength: 1024, pattern: noNul, description: 'only keys that start with it' },
        continuationToken: { type: 'string', minLength: 1, maxLength: 4096, pattern: noNul, description: 'from the previous page' },
        maxKeys: { type: 'integer', minimum: 1, maximum: MAX_KEYS_LIMIT, default: DEFAULT_MAX_KEYS },
      }),
      response: { description: 'one page', schema: pageView },
      handler: ({ s3, params, query }) => {
        const req: ListObjectsRequest = {
          maxKeys: query.maxKeys ?? DEFAULT_MAX_KEYS,
          ...(query.prefix ? { prefix: query.prefix } : {}),
          ...(query.continuationToken ? { continuationToken: query.continuationToken } : {}),
        };
        return service.with(keys(s3), (gw) => gw.listObjects(params.bucket, req));
      },
    }),
    route<{ key: string }, unknown, { bucket: string }>({
      method: 'POST',
      path: '/s3/buckets/{bucket}/objects/delete',
      leader: true,
      tags: ['s3'],
      s3: true,
      summary: 'Delete an object. A key that is not there is deleted already (as in S3); an unknown bucket is 404',
      params: bucketParam,
      body: object({ key: objectKey }, ['key']),
      response: { description: 'deleted', schema: statusSchema('deleted') },
      handler: async ({ s3, params, body }) => {
        await service.with(keys(s3), (gw) => gw.deleteObject(params.bucket, body.key));
        return { status: 'deleted' };
      },
    }),
  ];
}
