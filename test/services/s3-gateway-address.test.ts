// Where the S3 proxy sends a caller's signed requests: to the address the master observed for
// the gateway's node (its agent's connection), on the master's RGW port, built with the URL API;
// never to the `ip` an agent wrote in its report.
import test from 'ava';
import { ServiceUnavailableError } from '../../src/errors.js';
import { Kind, type NodeSpec } from '../../src/model/kinds.js';
import type { S3Credentials, S3Session } from '../../src/model/s3.js';
import { gatewayUrl, S3Service } from '../../src/services/s3.js';
import { createMemoryStore } from '../../src/store/index.js';
import { Fleet } from '../../src/fleet/fleet.js';
import { systemClock } from '../../src/model/clock.js';

const KEYS: S3Credentials = { accessKey: 'AK', secretKey: 'SK' };

async function withGateway(reportedIp: string) {
  const store = await createMemoryStore();
  const id = '00000000-0000-4000-8000-0000000000a1';
  const spec: NodeSpec = {
    hostname: 'gw-a',
    macs: ['52:54:00:00:20:01'],
    role: 'worker',
    image: null,
    power: 'on',
    restartGeneration: 0,
    shutdownGeneration: 0,
    daemons: { rgw: {} },
  };
  await store.create({ kind: Kind.Node, id, name: 'gw-a', spec, status: { phase: 'active', ip: reportedIp, daemons: { rgw: true } } });
  const endpoints: string[] = [];
  const connect = (endpoint: string): S3Session => {
    endpoints.push(endpoint);
    return {
      listBuckets: async () => [],
      createBucket: async () => {},
      listObjects: async () => ({ objects: [], isTruncated: false, continuationToken: null }),
      deleteObject: async () => {},
    };
  };
  return { store, id, endpoints, connect };
}

test('s3 gateway address is the one the master observed, not the one the agent reported', async (t) => {
  const g = await withGateway('203.0.113.9');
  const observed = new Map([[g.id, '192.0.2.30']]);
  const s3 = new S3Service({ store: g.store, connect: g.connect, addressOf: (id) => observed.get(id) ?? null });
  await s3.with(KEYS, (s) => s.listBuckets());
  t.deepEqual(g.endpoints, ['http://192.0.2.30:7480']);
  t.deepEqual(await s3.gateways(), [{ hostname: 'gw-a', ip: '192.0.2.30', port: 7480 }]);
});

test('s3 gateway without an observed IP is not used', async (t) => {
  for (const seen of [null, 'evil.example', '192.0.2.30/steal', '10.0.0.5\n']) {
    const g = await withGateway('192.0.2.30');
    const s3 = new S3Service({ store: g.store, connect: g.connect, addressOf: () => seen });
    await t.throwsAsync(
      s3.with(KEYS, (s) => s.listBuckets()),
      { instanceOf: ServiceUnavailableError, message: /no RADOS gateway is running/ },
      String(seen),
    );
    t.deepEqual(g.endpoints, [], String(seen));
  }
});

test('s3 gateway URL is built from a validated IP and a port, with no path', (t) => {
  t.is(gatewayUrl({ hostname: 'a', ip: '192.0.2.1', port: 7480 }), 'http://192.0.2.1:7480');
  t.is(gatewayUrl({ hostname: 'a', ip: 'fd00::1', port: 7480 }), 'http://[fd00::1]:7480');
  for (const ip of ['evil.example', '192.0.2.1:80/x', '192.0.2.1/x?y#', 'user@192.0.2.1', '', '[fd00::1]']) {
    t.throws(() => gatewayUrl({ hostname: 'a', ip, port: 7480 }), { instanceOf: ServiceUnavailableError }, ip);
  }
  t.throws(() => gatewayUrl({ hostname: 'a', ip: '192.0.2.1', port: 0 }), { instanceOf: ServiceUnavailableError });
});

test('s3 gateway the fleet keeps the source address of the last report', (t) => {
  const fleet = new Fleet(systemClock, 1_000);
  const report = {
    bootId: 'b',
    hostname: 'gw-a',
    ip: '203.0.113.9',
    disks: [],
    nics: [],
    daemons: { mon: false, mgr: false, mds: false, rgw: true, osds: [] },
  };
  t.is(fleet.observe('n').address ?? null, null);
  fleet.report('n', report, '192.0.2.30');
  t.is(fleet.observe('n').address, '192.0.2.30');
  fleet.report('n', report, null);
  t.is(fleet.observe('n').address, null, 'a report without a connection (in-process) is no observation');
});
