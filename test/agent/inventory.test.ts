import test from 'ava';
import { readFileSync } from 'node:fs';
import { CommandOutputError } from '../../src/clients/ceph-output.js';
import { parseIpAddr, parseLsblk, type RawBlockDevice } from '../../src/clients/inventory.js';
import { disksFrom, labelReport, nicsFrom, readInventory, withLabels } from '../../src/agent/inventory.js';
import type { BluestoreLabel } from '../../src/agent/bluestore-label.js';
import { agentReportSchema } from '../../src/model/agent-report.js';
import { createAjv } from '../../src/model/validate.js';
import { FakeRunner } from '../helpers/fake-runner.js';

// Recorded on the CI machine (Debian 12, util-linux 2.38, iproute2 6.1) with one loop device attached.
const fixture = (name: string): string => readFileSync(new URL(`../../../test/fixtures/inventory/${name}`, import.meta.url), 'utf8');

test('inventory disks from recorded lsblk: the loop device is a blank disk, the root disk is the system disk, zram is skipped', (t) => {
  t.deepEqual(disksFrom(parseLsblk(fixture('lsblk.json'))), [
    {
      serial: '/dev/loop0',
      devicePath: '/dev/loop0',
      sizeBytes: 1073741824,
      rotational: true,
      model: '',
      vendor: '',
      interface: 'loop',
      isSystem: false,
      hasFilesystem: false,
    },
    {
      serial: '/dev/vda',
      devicePath: '/dev/vda',
      sizeBytes: 274877906944,
      rotational: true,
      model: '',
      vendor: '0x1af4',
      interface: 'virtio',
      isSystem: true,
      hasFilesystem: false,
    },
  ]);
});

const dev = (over: Partial<RawBlockDevice>): RawBlockDevice => ({
  name: 'sdb',
  path: '/dev/sdb',
  type: 'disk',
  size: 4e12,
  rota: false,
  ro: false,
  serial: ' S3Z1NB0K ',
  wwn: null,
  model: 'Samsung SSD ',
  vendor: 'ATA     ',
  tran: 'sata',
  subsystems: 'block:scsi:pci',
  fstype: null,
  mountpoints: [null],
  ...over,
});

test('inventory disks: partitions, filesystems and system mounts deep in the tree are seen', (t) => {
  const [sdb, sdc, sdd] = disksFrom([
    dev({ children: [dev({ name: 'sdb1', path: '/dev/sdb1', type: 'part', fstype: 'ext4', mountpoints: ['/boot'] })] }),
    dev({ name: 'sdc', path: '/dev/sdc', serial: null, wwn: '0x5000c500a1b2c3d4', fstype: 'xfs' }),
    dev({ name: 'sdd', path: '/dev/sdd', children: [dev({ name: 'sdd1', path: '/dev/sdd1', type: 'part' })] }),
  ]);
  t.like(sdb, {
    serial: 'S3Z1NB0K',
    model: 'Samsung SSD',
    vendor: 'ATA',
    interface: 'sata',
    isSystem: true,
    hasFilesystem: true,
    rotational: false,
  });
  t.like(sdc, { serial: '0x5000c500a1b2c3d4', isSystem: false, hasFilesystem: true });
  t.like(sdd, { isSystem: false, hasFilesystem: true });
});

test('inventory nics from recorded ip -j addr: loopback aside, the first IPv4 address, link state from LOWER_UP', (t) => {
  t.deepEqual(nicsFrom(parseIpAddr(fixture('ip-addr.json'))), [
    { name: 'ifb0', mac: 'fa:5a:12:8f:65:b9', ip: '', connected: false, mtu: 1500 },
    { name: 'ifb1', mac: 'fe:86:ef:1a:02:2a', ip: '', connected: false, mtu: 1500 },
    { name: 'eth0', mac: '02:fc:00:00:00:01', ip: '192.0.2.2', connected: true, mtu: 1400 },
  ]);
});

test('inventory output that is not what lsblk or ip print is a CommandOutputError naming the field', (t) => {
  const err = t.throws(() => parseLsblk('{"blockdevices":[{"name":"sda"}]}'), { instanceOf: CommandOutputError });
  t.regex(err.message, /^lsblk -J -b -O: unexpected output: .*path/);
  t.throws(() => parseIpAddr('not json'), { instanceOf: CommandOutputError, message: /^ip -j addr: unexpected output: not valid JSON/ });
});

test('inventory reads both commands through the runner, each with a deadline', async (t) => {
  const runner = new FakeRunner()
    .expect('lsblk', ['-J', '-b', '-O'], { stdout: fixture('lsblk.json') })
    .expect('ip', ['-j', 'addr'], { stdout: fixture('ip-addr.json') });
  const inv = await readInventory(runner, 5_000);
  runner.verify();
  t.is(inv.disks.length, 2);
  t.is(inv.nics.length, 3);
  t.true(runner.calls.every((c) => c.opts.timeoutMs === 5_000));
});

const LABEL: BluestoreLabel = {
  osdUuid: '0b5ad0e4-5a61-4a7e-9f0e-7a3d2f1c9b10',
  sizeBytes: 4e12,
  description: 'main',
  cephFsid: '6e1b7a52-0a51-4bb3-9c0a-6f0d1a2b3c4d',
  whoami: 7,
  complete: true,
};

test('inventory reads the BlueStore label of disks lsblk calls ceph_bluestore or says nothing of, and no other disk', async (t) => {
  const read: string[] = [];
  const disks = await withLabels(
    [
      dev({ name: 'sda', path: '/dev/sda', mountpoints: ['/'] }),
      dev({ name: 'sdb', path: '/dev/sdb', fstype: 'ceph_bluestore' }),
      dev({ name: 'sdc', path: '/dev/sdc' }),
      dev({ name: 'sdd', path: '/dev/sdd', fstype: 'xfs' }),
      dev({ name: 'sde', path: '/dev/sde', children: [dev({ name: 'sde1', path: '/dev/sde1', type: 'part' })] }),
    ],
    async (device) => {
      read.push(device);
      return device === '/dev/sdb' ? LABEL : null;
    },
  );
  t.deepEqual(read.sort(), ['/dev/sdb', '/dev/sdc']);
  t.deepEqual(
    disks.map((d) => [d.devicePath, d.bluestore ?? null]),
    [
      ['/dev/sda', null],
      ['/dev/sdb', { fsid: LABEL.cephFsid, osdUuid: LABEL.osdUuid, osdId: 7 }],
      ['/dev/sdc', null],
      ['/dev/sdd', null],
      ['/dev/sde', null],
    ],
  );
  // The report the master gets with it is valid.
  const check = createAjv().compile(agentReportSchema);
  const report = { bootId: 'b1', hostname: 'n1', ip: '', disks, nics: [], daemons: { osds: [] } };
  t.true(check(report), JSON.stringify(check.errors));
});

test('inventory marks a labelled disk as holding a filesystem when lsblk could not tell', async (t) => {
  const [sdc] = await withLabels([dev({ name: 'sdc', path: '/dev/sdc' })], async () => LABEL);
  t.like(sdc, { hasFilesystem: true, bluestore: { osdId: 7 } });
});

test('inventory leaves out a label it cannot read, a db device label, and one without cluster or id', async (t) => {
  const disks = await withLabels(
    ['sdb', 'sdc', 'sdd', 'sde'].map((n) => dev({ name: n, path: `/dev/${n}` })),
    async (device) => {
      if (device === '/dev/sdb') throw new Error('EIO');
      if (device === '/dev/sdc') return { ...LABEL, description: 'bluefs db' };
      if (device === '/dev/sdd') return { ...LABEL, whoami: null };
      return { ...LABEL, cephFsid: 'not a fsid; rm -rf /' };
    },
  );
  t.true(disks.every((d) => d.bluestore === undefined && !d.hasFilesystem));
  t.is(labelReport({ ...LABEL, cephFsid: null }), undefined);
});

test('inventory reads labels through the given reader after lsblk and ip', async (t) => {
  const runner = new FakeRunner()
    .expect('lsblk', ['-J', '-b', '-O'], { stdout: fixture('lsblk.json') })
    .expect('ip', ['-j', 'addr'], { stdout: fixture('ip-addr.json') });
  const read: string[] = [];
  const inv = await readInventory(runner, 5_000, async (d) => {
    read.push(d);
    return LABEL;
  });
  runner.verify();
  // The loop device is read; the system disk is not.
  t.deepEqual(read, ['/dev/loop0']);
  t.like(inv.disks[0], { devicePath: '/dev/loop0', bluestore: { osdId: 7 } });
});
