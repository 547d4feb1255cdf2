// The lab's RADOS gateway as an S3 client sees it: the AWS SDK against its loopback listener,
// SigV4 checked against the simulated RGW users' keys, RGW's answers for ownership and names,
// and Quarry's client turning those answers into its error classes.
import test, { type ExecutionContext } from 'ava';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ServiceException,
} from '@aws-sdk/client-s3';
import { SdkS3Session, s3ClientConfig } from '../../src/clients/s3.js';
import { AuthError, ConflictError, ForbiddenError, NotFoundError, ServiceUnavailableError } from '../../src/errors.js';
import type { S3Credentials } from '../../src/model/s3.js';
import { LabS3Gateways } from '../../src/sim/s3/gateway.js';
import { MAX_SKEW_MS } from '../../src/sim/s3/sigv4.js';
import { newCluster, withMons } from './ceph-helpers.js';

function setup(now: () => number = Date.now) {
  const { cluster } = newCluster();
  withMons(cluster);
  cluster.startRgw('gw1', 7480, 'h1');
  const alice = cluster.accounts.createUser({ uid: 'alice', displayName: 'Alice' }).keys[0]!;
  const bob = cluster.accounts.createUser({ uid: 'bob', displayName: 'Bob' }).keys[0]!;
  const gateways = new LabS3Gateways(cluster, now);
  return { cluster, gateways, alice, bob };
}

type Lab = ReturnType<typeof setup>;

async function sdk(t: ExecutionContext, lab: Lab, keys: S3Credentials): Promise<S3Client> {
  const c = new S3Client(s3ClientConfig(await lab.gateways.url('gw1'), keys));
  t.teardown(() => c.destroy());
  return c;
}

const failure = (p: Promise<unknown>): Promise<S3ServiceException> =>
  p.then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => e as S3ServiceException,
  );

test('s3 gateway objects round-trip with keys that need encoding, and pages follow the token', async (t) => {
  const lab = setup();
  t.teardown(() => lab.gateways.stop());
  const c = await sdk(t, lab, lab.alice);
  await c.send(new CreateBucketCommand({ Bucket: 'bkt1' }));
  const keys = ['a+b', 'dir/ü ñ.txt', 'percent%20sign', 'q?x=1&y', 'z'];
  for (const Key of keys) await c.send(new PutObjectCommand({ Bucket: 'bkt1', Key, Body: `body of ${Key}`, ContentType: 'text/plain' }));
  const got = await c.send(new GetObjectCommand({ Bucket: 'bkt1', Key: 'dir/ü ñ.txt' }));
  t.is(await got.Body?.transformToString(), 'body of dir/ü ñ.txt');
  t.is(got.ContentType, 'text/plain');
  const seen: string[] = [];
  let token: string | undefined;
  for (let i = 0; i < 5; i++) {
    const page = await c.send(new ListObjectsV2Command({ Bucket: 'bkt1', MaxKeys: 2, ...(token ? { ContinuationToken: token } : {}) }));
    seen.push(...(page.Contents ?? []).map((o) => o.Key ?? ''));
    token = page.NextContinuationToken;
    if (!page.IsTruncated) break;
  }
  t.deepEqual(seen, [...keys].sort());
  t.deepEqual(
    (await c.send(new ListObjectsV2Command({ Bucket: 'bkt1', Prefix: 'dir/' }))).Contents?.map((o) => o.Key),
    ['dir/ü ñ.txt'],
  );
  t.is((await failure(c.send(new ListObjectsV2Command({ Bucket: 'bkt1', ContinuationToken: 'not-a-token!' })))).name, 'InvalidArgument');
});

test('s3 gateway refuses a wrong secret, an unknown key, a skewed clock and a body changed after signing', async (t) => {
  const lab = setup();
  t.teardown(() => lab.gateways.stop());
  const wrong = await sdk(t, lab, { accessKey: lab.alice.accessKey, secretKey: lab.bob.secretKey });
  t.is((await failure(wrong.send(new CreateBucketCommand({ Bucket: 'bkt2' })))).name, 'SignatureDoesNotMatch');
  const unknown = await sdk(t, lab, { accessKey: 'QS3UNKNOWNKEY0000000', secretKey: lab.alice.secretKey });
  t.is((await failure(unknown.send(new CreateBucketCommand({ Bucket: 'bkt2' })))).name, 'InvalidAccessKeyId');
  t.deepEqual(lab.gateways.buckets.owned('alice'), [], 'nothing was created');

  const c = await sdk(t, lab, lab.alice);
  await c.send(new CreateBucketCommand({ Bucket: 'bkt2' }));
  // After signing (which is in the finalize step), swap the body for one of the same length.
  c.middlewareStack.add(
    (next) => async (args) => {
      const req = args.request as { body?: unknown };
      if (req.body === 'original') req.body = 'tampered';
      return next(args);
    },
    { step: 'deserialize', name: 'qs3Tamper' },
  );
  t.is((await failure(c.send(new PutObjectCommand({ Bucket: 'bkt2', Key: 'k', Body: 'original' })))).name, 'XAmzContentSHA256Mismatch');
  t.is(lab.gateways.buckets.bucket('alice', 'bkt2').objects.size, 0);

  const late = setup(() => Date.now() + MAX_SKEW_MS + 60_000);
  t.teardown(() => late.gateways.stop());
  const skewed = await sdk(t, late, late.alice);
  t.is((await failure(skewed.send(new CreateBucketCommand({ Bucket: 'bkt3' })))).name, 'RequestTimeTooSkewed');
});

test('s3 gateway buckets belong to their user, as in RGW', async (t) => {
  const lab = setup();
  t.teardown(() => lab.gateways.stop());
  const [a, b] = [await sdk(t, lab, lab.alice), await sdk(t, lab, lab.bob)];
  await a.send(new CreateBucketCommand({ Bucket: 'shared-name' }));
  await a.send(new CreateBucketCommand({ Bucket: 'shared-name' })); // re-creating one's own succeeds
  t.is((await failure(b.send(new CreateBucketCommand({ Bucket: 'shared-name' })))).name, 'BucketAlreadyExists');
  t.is((await failure(b.send(new ListObjectsV2Command({ Bucket: 'shared-name' })))).name, 'AccessDenied');
  t.is((await failure(a.send(new ListObjectsV2Command({ Bucket: 'absent' })))).name, 'NoSuchBucket');
  t.is((await failure(a.send(new CreateBucketCommand({ Bucket: '10.0.0.1' })))).name, 'InvalidBucketName');
});

test("s3 client turns the gateway's answers into Quarry's errors, and a stopped gateway into 503", async (t) => {
  const lab = setup();
  t.teardown(() => lab.gateways.stop());
  const url = await lab.gateways.url('gw1');
  const alice = new SdkS3Session(url, lab.alice, { timeoutMs: 5_000 });
  const bob = new SdkS3Session(url, lab.bob, { timeoutMs: 5_000 });
  await alice.createBucket('mine');
  t.deepEqual(
    (await alice.listBuckets()).map((x) => x.name),
    ['mine'],
  );
  const wrong = new SdkS3Session(url, { accessKey: lab.alice.accessKey, secretKey: 'not-the-secret-key-of-alice' });
  const refused = await t.throwsAsync(() => wrong.listBuckets(), { instanceOf: AuthError });
  t.false(refused.message.includes('not-the-secret-key-of-alice'));
  await t.throwsAsync(() => alice.listObjects('absent', { maxKeys: 10 }), { instanceOf: NotFoundError });
  await t.throwsAsync(() => bob.createBucket('mine'), { instanceOf: ConflictError, message: /bucket name is taken/ });
  await t.throwsAsync(() => bob.deleteObject('mine', 'k'), { instanceOf: ForbiddenError });
  await alice.deleteObject('mine', 'never-there'); // S3 deletes are idempotent

  lab.cluster.stopRgw('gw1');
  const down = await t.throwsAsync(() => alice.listBuckets(), { instanceOf: ServiceUnavailableError });
  t.is(down.code, 'CLUSTER_UNAVAILABLE');
  t.regex(down.message, /could not list buckets: no answer/);
});
