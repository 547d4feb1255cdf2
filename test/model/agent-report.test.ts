// The agent report schema, field by field: what real agents send passes (the lab's machines,
// the real agent's inventory of recorded lsblk and `ip -j addr` output), and each kind of
// hostile or broken value is refused with the field named.
import test, { type ExecutionContext } from 'ava';
import { readFile } from 'node:fs/promises';
import { InputError } from '../../src/errors.js';
import { disksFrom, nicsFrom } from '../../src/agent/inventory.js';
import { assertAgentReport, observedAddress } from '../../src/fleet/gateway.js';
import type { AgentReport } from '../../src/fleet/types.js';
import { buildMachines } from '../../src/sim/machines.js';
import { DocValidator } from '../../src/model/validate.js';
import { Kind } from '../../src/model/kinds.js';

const fixture = async (name: string): Promise<unknown> =>
  JSON.parse(await readFile(new URL(`../../../test/fixtures/inventory/${name}`, import.meta.url), 'utf8'));

function report(over: Partial<AgentReport> = {}): AgentReport {
  return {
    bootId: '0f3c2b8e-5a1d-4c7e-9b2f-6d8a1e4c3b70',
    hostname: 'node-1',
    ip: '10.0.0.5',
    disks: [
      {
        serial: 'S4EWNX0N123456 A',
        devicePath: '/dev/nvme0n1',
        sizeBytes: 1e12,
        rotational: false,
        model: 'Samsung SSD 970 EVO Plus 1TB',
        vendor: 'ATA',
        interface: 'nvme',
        isSystem: false,
        hasFilesystem: false,
      },
    ],
    nics: [{ name: 'eno1', mac: '52:54:00:12:34:56', ip: '10.0.0.5', connected: true, mtu: 1500 }],
    daemons: { mon: false, mgr: false, mds: false, rgw: false, osds: [0, 3] },
    ...over,
  };
}
const disk = (over: Record<string, unknown>) => report({ disks: [{ ...report().disks[0]!, ...over }] });
const nic = (over: Record<string, unknown>) => report({ nics: [{ ...report().nics[0]!, ...over }] });

function refused(t: ExecutionContext, r: unknown, path: RegExp, what: string): void {
  const err = t.throws(() => assertAgentReport(r), { instanceOf: InputError }, what);
  t.is(err.code, 'VALIDATION_FAILED', what);
  t.true(
    err.errors.some((e) => path.test(e.path)),
    `${what}: ${JSON.stringify(err.errors)}`,
  );
}

test('agent report what the lab machines and the real agent send passes', async (t) => {
  for (const m of buildMachines(30)) {
    assertAgentReport({
      bootId: '6a0c9a57-8d3e-4f43-a3b5-0d7b5b1f0c21',
      hostname: `node-${m.index}`,
      ip: m.ip,
      disks: m.disks.map(({ dead: _d, ...d }) => d),
      nics: m.nics,
      daemons: { mon: true, mgr: false, mds: false, rgw: true, osds: [1, 2] },
    });
  }
  const lsblk = (await fixture('lsblk.json')) as { blockdevices: Parameters<typeof disksFrom>[0] };
  const ipAddr = (await fixture('ip-addr.json')) as Parameters<typeof nicsFrom>[0];
  const disks = disksFrom(lsblk.blockdevices);
  const nics = nicsFrom(ipAddr);
  t.true(disks.length > 0 && nics.length > 0);
  t.notThrows(() => assertAgentReport(report({ disks, nics, ip: nics.find((n) => n.ip)?.ip ?? '' })));
  t.notThrows(() => assertAgentReport(report({ ip: '', nics: [{ ...report().nics[0]!, ip: '' }] })), 'no address yet');
  t.notThrows(() => assertAgentReport(report({ ip: 'fd00::2', hostname: 'rack1-node7.dc.example.com' })));
  t.notThrows(() =>
    assertAgentReport(
      disk({ devicePath: '/dev/disk/by-id/wwn-0x5000c500a1b2c3d4', serial: '/dev/vda', model: '', vendor: '', interface: '' }),
    ),
  );
  t.notThrows(() => assertAgentReport(nic({ name: 'enp0s31f6.100' })));
});

test('agent report ip fields accept only IP addresses', (t) => {
  for (const bad of [
    '10.0.0.5\nosd_crush_location_hook = /tmp/x',
    '10.0.0.256',
    '10.0.0',
    'evil.example',
    '127.0.0.1:9999/steal#',
    '10.0.0.5 ',
    '[::1]',
    'fe80::1%eth0',
    'x'.repeat(46),
  ]) {
    refused(t, report({ ip: bad }), /^\/body\/ip$/, JSON.stringify(bad));
    refused(t, nic({ ip: bad }), /^\/body\/nics\/0\/ip$/, `nic ${JSON.stringify(bad)}`);
  }
});

test('agent report hostnames follow RFC 1123', (t) => {
  for (const bad of ['', '-node', 'node-', 'no de', 'node_1', 'node\n1', 'a..b', `${'a'.repeat(64)}.x`, `${'a'.repeat(63)}.`.repeat(5)]) {
    refused(t, report({ hostname: bad }), /^\/body\/hostname$/, JSON.stringify(bad));
  }
});

test('agent report device paths are plain /dev paths', (t) => {
  for (const bad of [
    '',
    'sda',
    '/dev/',
    '/dev/../etc/passwd',
    '/dev/sd a',
    '/dev/sda\n',
    '/tmp/x',
    '/dev/sda;reboot',
    '/dev/$(x)',
    `/dev/${'a'.repeat(260)}`,
  ]) {
    refused(t, disk({ devicePath: bad }), /^\/body\/disks\/0\/devicePath$/, JSON.stringify(bad));
  }
});

test('agent report serials, models and vendors are printable and bounded', (t) => {
  for (const [field, bad] of [
    ['serial', ''],
    ['serial', 'S\n1'],
    ['serial', 'x'.repeat(129)],
    ['model', 'a\u0000b'],
    ['model', 'é'],
    ['vendor', 'x'.repeat(257)],
    ['vendor', 'v\r'],
    ['interface', 'sata\n'],
    ['interface', 's a'],
  ] as const) {
    refused(t, disk({ [field]: bad }), new RegExp(`^/body/disks/0/${field}$`), `${field} ${JSON.stringify(bad)}`);
  }
  refused(t, disk({ sizeBytes: -1 }), /sizeBytes/, 'negative size');
  refused(t, disk({ sizeBytes: 1.5 }), /sizeBytes/, 'fractional size');
});

test('agent report NIC names follow the kernel rule, MACs are MACs', (t) => {
  for (const bad of ['', '.', '..', 'eth/0', 'eth:0', 'eth 0', 'a'.repeat(16), 'eth0\n']) {
    refused(t, nic({ name: bad }), /^\/body\/nics\/0\/name$/, JSON.stringify(bad));
  }
  for (const bad of ['52:54:00:12:34', '52-54-00-12-34-56', '52:54:00:12:34:5g'])
    refused(t, nic({ mac: bad }), /^\/body\/nics\/0\/mac$/, bad);
  refused(t, nic({ mtu: 70_000 }), /mtu/, 'mtu');
});

test('agent report every array is bounded and unknown fields are refused', (t) => {
  refused(t, report({ disks: Array.from({ length: 513 }, () => report().disks[0]!) }), /^\/body\/disks$/, 'disks');
  refused(t, report({ nics: Array.from({ length: 65 }, () => report().nics[0]!) }), /^\/body\/nics$/, 'nics');
  refused(t, report({ daemons: { ...report().daemons, osds: Array.from({ length: 4097 }, (_, i) => i) } }), /osds$/, 'osds');
  refused(t, { ...report(), extra: 1 }, /^\/body\/extra$/, 'extra field');
  refused(t, report({ bootId: 'b\n1' }), /bootId/, 'bootId');
});

test('agent report observed addresses are IPs, IPv4-mapped ones as IPv4', (t) => {
  t.is(observedAddress('::ffff:192.0.2.7'), '192.0.2.7');
  t.is(observedAddress('192.0.2.7'), '192.0.2.7');
  t.is(observedAddress('fd00::7'), 'fd00::7');
  for (const bad of [null, undefined, '', 'evil.example', '192.0.2.7\n']) t.is(observedAddress(bad), null, String(bad));
});

test('agent report node status refuses an address that is not an IP', (t) => {
  const v = new DocValidator();
  t.notThrows(() => v.check(Kind.Node, 'status', { ip: '10.0.0.5' }));
  t.notThrows(() => v.check(Kind.Node, 'status', { ip: '' }));
  t.throws(() => v.check(Kind.Node, 'status', { ip: '10.0.0.5\nx = y' }), { instanceOf: InputError });
});
