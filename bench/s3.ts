// What Quarry's /s3 layer costs: one page of 200 objects listed through GET /s3/buckets/{b}/objects
// (koa, key pair from headers, gateway lookup in the store, a fresh AWS SDK client per request,
// then the gateway) against the same listing with one long-lived SDK client speaking to the same
// lab gateway directly. Both sides run here, in turns, with 8 requests in flight.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { s3ClientConfig, connectS3 } from '../src/clients/s3.js';
import { createHttpApp } from '../src/http/app.js';
import { s3Routes } from '../src/http/routes/s3.js';
import { S3Service } from '../src/services/s3.js';
import { silentLogger } from '../src/log.js';
import { Kind } from '../src/model/kinds.js';
import { createMemoryStore } from '../src/store/index.js';
import { SimCephCluster } from '../src/sim/ceph/cluster.js';
import { LabS3Gateways } from '../src/sim/s3/gateway.js';

const OBJECTS = 500;
const IN_FLIGHT = 8;
const ROUNDS = 3;
const PER_ROUND = 300;

async function timed(n: number, one: () => Promise<void>): Promise<number> {
  let left = n;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (left-- > 0) await one();
    }),
  );
  return (performance.now() - start) / n;
}

export async function run(): Promise<void> {
  const cluster = new SimCephCluster();
  cluster.bootstrap('4472770b-acbf-445c-ab2b-e96f396aa78f', { name: 'a', addr: '10.0.0.1', host: 'h1' });
  cluster.startMon('a');
  cluster.startRgw('gw1', 7480, 'h1');
  const [pair] = cluster.accounts.createUser({ uid: 'bench', displayName: 'Bench' }).keys;
  const keys = pair!;
  const gateways = new LabS3Gateways(cluster);
  const url = await gateways.url('gw1');
  const direct = new S3Client(s3ClientConfig(url, keys));
  gateways.buckets.create('bench', 'bench-bucket');
  for (let i = 0; i < OBJECTS; i++)
    await direct.send(new PutObjectCommand({ Bucket: 'bench-bucket', Key: `k/${String(i).padStart(5, '0')}`, Body: 'x' }));

  const store = await createMemoryStore();
  const spec = {
    hostname: 'gw1',
    macs: ['52:54:00:00:00:01'],
    role: 'worker',
    image: null,
    power: 'on',
    restartGeneration: 0,
    shutdownGeneration: 0,
    daemons: { rgw: {} },
  };
  await store.create({
    kind: Kind.Node,
    id: '00000000-0000-4000-8000-000000000001',
    name: 'gw1',
    spec,
    status: { phase: 'active', ip: '192.0.2.1', daemons: { rgw: true } },
  });
  const stateDir = await mkdtemp(join(tmpdir(), 'quarry-bench-s3-'));
  const service = new S3Service({ store, connect: connectS3(), endpointOf: () => url });
  const app = await createHttpApp({
    store,
    config: { stateDir, adminPassword: 'bench-admin-password' },
    logger: silentLogger,
    print: () => {},
    areas: [s3Routes(service)],
  });
  const listening = await app.listen(0, '127.0.0.1');
  const path = `http://127.0.0.1:${listening.port}/s3/buckets/bench-bucket/objects?maxKeys=200`;
  const headers = { 'X-S3-Access-Key': keys.accessKey, 'X-S3-Secret-Key': keys.secretKey };

  const viaQuarry = async () => {
    const r = await fetch(path, { headers });
    if (r.status !== 200) throw new Error(`status ${r.status}`);
    await r.arrayBuffer();
  };
  const viaSdk = async () => {
    await direct.send(new ListObjectsV2Command({ Bucket: 'bench-bucket', MaxKeys: 200 }));
  };
  let [q, d] = [0, 0];
  for (let round = 0; round < ROUNDS; round++) {
    q += await timed(PER_ROUND, viaQuarry);
    d += await timed(PER_ROUND, viaSdk);
  }
  console.log(
    `list 200 of ${OBJECTS} objects: through /s3 ${(q / ROUNDS).toFixed(2)} ms/request, SDK direct ${(d / ROUNDS).toFixed(2)} ms/request (${IN_FLIGHT} in flight)`,
  );
  console.log(`ratio (through Quarry / direct): ${(q / d).toFixed(2)}×`);
  direct.destroy();
  await listening.close();
  await gateways.stop();
  await rm(stateDir, { recursive: true, force: true });
}
