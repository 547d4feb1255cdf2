// The real agent's OSD disk steps over a FakeRunner and regular files standing in for disks
// (sparse: an 11 GiB "disk" costs nothing): the verified wipe, the zap, and an OSD's creation
// on a disk that already holds it (adoption).
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, writeSync } from 'node:fs';
import { lstat, mkdir, open, readFile, readlink, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { agentSteps } from '../../src/agent/steps/index.js';
import { LABEL_MAGIC, readBlock } from '../../src/agent/bluestore-label.js';
import { ddArgs, wipeRanges } from '../../src/agent/wipe.js';
import { alive } from '../../src/exec/processes.js';
import type { FakeCall, FakeReply } from '../helpers/fake-runner.js';
import { FSID, fakeNode, keyring, type Node } from './helpers.js';
import { encodeLabel, finishedMeta } from './labels.js';

const steps = agentSteps();
const step = (name: string) => steps.get(name)!;
const GiB = 2 ** 30;
const MiB = 2 ** 20;
const OSD_UUID = '0b5ad0e4-5a61-4a7e-9f0e-7a3d2f1c9b10';
const OSD_KEY = 'AQBAbAJrAAAAABAAosdosdosdosdosdosdosdosdos0==';

/** A sparse file of `bytes` standing in for a disk. */
async function disk(n: Node, bytes: number, name = 'disk'): Promise<string> {
  const path = join(n.dir, name);
  await writeFile(path, '');
  await truncate(path, bytes);
  return path;
}

async function writeAt(path: string, offset: number, data: Buffer): Promise<void> {
  const fh = await open(path, 'r+');
  await fh.write(data, 0, data.length, offset);
  await fh.close();
}

/** dd as the FakeRunner's reply: it really writes the zeroes its arguments say (into the file
 * standing in for the disk), unless the disk drops them. */
const dd =
  (writes: boolean) =>
  (call: FakeCall): FakeReply => {
    if (!writes) return {};
    const arg = (k: string): string => (call.args as string[]).find((a) => a.startsWith(`${k}=`))?.slice(k.length + 1) ?? '0';
    const bs = Number(arg('bs'));
    const fd = openSync(arg('of'), 'r+');
    writeSync(fd, Buffer.alloc(bs * Number(arg('count'))), 0, bs * Number(arg('count')), bs * Number(arg('seek')));
    closeSync(fd);
    return {};
  };

/** The commands of a wipe of an 11 GiB disk, in order; blkid finds nothing unless told. */
const expectWipe11 = (n: Node, dev: string, o: { blkid?: FakeReply; writes?: boolean } = {}): void => {
  const args = (...a: string[]) => ['if=/dev/zero', `of=${dev}`, ...a, 'conv=fsync,notrunc', 'status=none'];
  const reply = dd(o.writes ?? true);
  n.runner
    .expect('wipefs', ['--all', dev])
    .expect('dd', args('bs=1048576', 'count=16'), reply)
    .expect('dd', args('bs=1048576', `seek=${11 * 1024 - 1}`, 'count=1'), reply)
    .expect('dd', args('bs=4096', `seek=${GiB / 4096}`, 'count=1'), reply)
    .expect('dd', args('bs=4096', `seek=${(10 * GiB) / 4096}`, 'count=1'), reply)
    .expect('blkid', ['-p', '-o', 'export', dev], o.blkid ?? { exitCode: 2 });
};

const label3 = (): Buffer => encodeLabel({ osdUuid: OSD_UUID, meta: finishedMeta(FSID, 3) });
const zeroAt = async (dev: string, offset: number): Promise<boolean> => (await readBlock(dev, offset)).every((b) => b === 0);

/** An "osd.<id>" process of this node: a command line with the node's conf, its pid file. */
async function runningOsd(t: ExecutionContext, n: Node, id: number): Promise<void> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', '-c', n.host.conf, '-i', String(id)], {
    stdio: 'ignore',
  });
  t.teardown(() => {
    if (alive(child.pid!)) process.kill(child.pid!, 'SIGKILL');
  });
  await once(child, 'spawn');
  await mkdir(n.host.opts.runDir, { recursive: true });
  await writeFile(n.host.pidFileOf('osd', String(id)), `${child.pid}\n`);
}

/** osd.<id>'s data dir on this node, its block symlink pointing at `dev`. */
async function osdDir(n: Node, id: number, dev: string): Promise<string> {
  const dir = n.host.dataDirOf('osd', String(id));
  await mkdir(dir, { recursive: true });
  await symlink(dev, join(dir, 'block'));
  return dir;
}

test('wipe ranges cover the head, the end and each BlueStore label copy the disk is large enough for', (t) => {
  const at = (size: number) => wipeRanges(size).map((r) => [r.offset, r.length]);
  t.deepEqual(at(11 * GiB), [
    [0, 16 * MiB],
    [11 * GiB - MiB, MiB],
    [GiB, 4096],
    [10 * GiB, 4096],
  ]);
  t.deepEqual(
    at(2000 * GiB).map(([o]) => o),
    [0, 2000 * GiB - MiB, GiB, 10 * GiB, 100 * GiB, 1000 * GiB],
  );
  // Exactly 1 GiB: no room for a label at 1 GiB; a small disk is zeroed whole, once.
  t.deepEqual(at(GiB), [
    [0, 16 * MiB],
    [GiB - MiB, MiB],
  ]);
  t.deepEqual(at(8 * MiB), [[0, 8 * MiB]]);
  // A label copy inside the zeroed end is not zeroed twice.
  t.deepEqual(
    at(GiB + 4096).map(([o]) => o),
    [0, GiB + 4096 - MiB],
  );
});

test('wipe dd arguments use the largest block size up to 1 MiB that divides offset and length', (t) => {
  t.deepEqual(ddArgs('/dev/sdb', { offset: 0, length: 16 * MiB, what: '' }), [
    'if=/dev/zero',
    'of=/dev/sdb',
    'bs=1048576',
    'count=16',
    'conv=fsync,notrunc',
    'status=none',
  ]);
  // A disk of 1 GiB + 512 bytes: its last MiB starts on a 512-byte boundary.
  t.deepEqual(ddArgs('/dev/sdb', { offset: GiB + 512 - MiB, length: MiB, what: '' }).slice(2, 5), [
    'bs=512',
    `seek=${(GiB + 512 - MiB) / 512}`,
    'count=2048',
  ]);
});

test('disk wipe erases signatures, zeroes the head, the end and each label copy, then reads back blank', async (t) => {
  const n = await fakeNode(t);
  const dev = await disk(n, 11 * GiB);
  for (const at of [0, GiB, 10 * GiB, 11 * GiB - 4096]) await writeAt(dev, at, label3());
  expectWipe11(n, dev);
  t.deepEqual(await step('disk.wipe')(n.ctx({ devicePath: dev })), { devicePath: dev });
  n.runner.verify();
  for (const at of [0, GiB, 10 * GiB, 11 * GiB - 4096]) t.true(await zeroAt(dev, at), `zeroes at ${at}`);
  const log = n.lines.map((l) => l.message);
  t.true(log.includes(`${dev}: zeroing the BlueStore label copy at 10 GiB, 4096 bytes at ${10 * GiB}`));
  t.is(log.at(-1), `${dev}: verified blank (blkid finds nothing, no BlueStore label at the head, 1 GiB, 10 GiB)`);
});

test('disk wipe fails naming each signature the read-back still finds, and where', async (t) => {
  const n = await fakeNode(t);
  const dev = await disk(n, 11 * GiB);
  // A disk that drops the writes (dd succeeds, nothing changes): the labels at 0 and 10 GiB stay.
  await writeAt(dev, 0, label3());
  await writeAt(dev, 10 * GiB, label3());
  expectWipe11(n, dev, { writes: false, blkid: { stdout: `DEVNAME=${dev}\nTYPE=ceph_bluestore\nUSAGE=other\n` } });
  await t.throwsAsync(step('disk.wipe')(n.ctx({ devicePath: dev })), {
    message:
      `${dev} is not blank after the wipe: blkid finds ceph_bluestore; ` +
      `a BlueStore label at the head (offset 0); a BlueStore label at 10 GiB (offset ${10 * GiB})`,
  });
  n.runner.verify();
  t.false(n.lines.some((l) => l.message.includes('verified blank')));
});

test('disk wipe of a disk that goes missing after wipefs, or of something that is not a disk, zeroes nothing', async (t) => {
  const n = await fakeNode(t);
  n.runner.expect('wipefs', ['--all', '/dev/qdisk-none']).expect('wipefs', ['--all', '/dev/null']);
  await t.throwsAsync(step('disk.wipe')(n.ctx({ devicePath: '/dev/qdisk-none' })), { message: 'no disk at /dev/qdisk-none on this node' });
  await t.throwsAsync(step('disk.wipe')(n.ctx({ devicePath: '/dev/null' })), { message: '/dev/null is not a block device' });
  n.runner.verify();
});

test('disk wipe refuses the disk of an OSD that runs; a stopped OSD data dir goes with the wipe', async (t) => {
  const n = await fakeNode(t);
  const dev = await disk(n, 11 * GiB);
  const dir = await osdDir(n, 7, dev);
  await runningOsd(t, n, 7);
  await t.throwsAsync(step('disk.wipe')(n.ctx({ devicePath: dev })), {
    message: `${dev} holds osd.7, which runs: destroy the OSD before wiping the disk`,
  });
  t.is(n.runner.calls.length, 0);
  t.truthy(await stat(dir));

  // Destroyed and stopped: the operator's wipe takes the data dir away too.
  await n.host.stop('osd', '7');
  expectWipe11(n, dev);
  await step('disk.wipe')(n.ctx({ devicePath: dev }));
  n.runner.verify();
  await t.throwsAsync(stat(dir), { code: 'ENOENT' });
});

test('disk wipe refuses a disk whose label names an OSD running here, though no data dir points at it', async (t) => {
  const n = await fakeNode(t);
  const dev = await disk(n, 11 * GiB);
  await writeAt(dev, 0, encodeLabel({ osdUuid: OSD_UUID, meta: finishedMeta(FSID, 6) }));
  await runningOsd(t, n, 6);
  await t.throwsAsync(step('disk.wipe')(n.ctx({ devicePath: dev })), {
    message: `${dev} holds osd.6, which runs: destroy the OSD before wiping the disk`,
  });
  t.is(n.runner.calls.length, 0);
  t.false(await zeroAt(dev, 0));
  // The id now runs from another disk (a replacement kept it, with a new uuid): this old disk may go.
  const other = await disk(n, GiB, 'new-disk');
  const dir = await osdDir(n, 6, other);
  await writeFile(join(dir, 'fsid'), '7c9e6679-7425-40de-944b-e07fc1f90ae7\n');
  expectWipe11(n, dev);
  await step('disk.wipe')(n.ctx({ devicePath: dev }));
  n.runner.verify();
  t.truthy(await stat(dir));
});

test('osd zap refuses while the OSD runs, then removes its data dir and unit and wipes its disk', async (t) => {
  const n = await fakeNode(t);
  const dev = await disk(n, 11 * GiB);
  await writeAt(dev, 0, encodeLabel({ osdUuid: OSD_UUID, meta: finishedMeta(FSID, 4) }));
  const dir = await osdDir(n, 4, dev);
  await mkdir(join(n.host.opts.dataDir, 'units'), { recursive: true });
  await writeFile(join(n.host.opts.dataDir, 'units', 'osd.4.json'), '{"cmd":"ceph-osd","args":[]}');
  await runningOsd(t, n, 4);
  await t.throwsAsync(step('ceph.osd.zap')(n.ctx({ osdId: 4, devicePath: dev })), {
    message: 'osd.4 still runs: stop it before zapping its disk',
  });
  t.truthy(await stat(dir));

  await step('ceph.osd.stop')(n.ctx({ osdId: 4 }));
  expectWipe11(n, dev);
  t.deepEqual(await step('ceph.osd.zap')(n.ctx({ osdId: 4, devicePath: dev })), { devicePath: dev });
  n.runner.verify();
  await t.throwsAsync(stat(dir), { code: 'ENOENT' });
  await t.throwsAsync(stat(join(n.host.opts.dataDir, 'units', 'osd.4.json')), { code: 'ENOENT' });
  t.true(await zeroAt(dev, 0));
});

test('osd zap leaves a data dir of its id that belongs to another disk (the purged id reused), and wipes', async (t) => {
  const n = await fakeNode(t);
  const dev = await disk(n, 11 * GiB);
  await writeAt(dev, 0, encodeLabel({ osdUuid: OSD_UUID, meta: finishedMeta(FSID, 4) }));
  const dir = await osdDir(n, 4, await disk(n, GiB, 'new-disk'));
  await writeFile(join(dir, 'fsid'), '7c9e6679-7425-40de-944b-e07fc1f90ae7\n');
  await runningOsd(t, n, 4);
  expectWipe11(n, dev);
  await step('ceph.osd.zap')(n.ctx({ osdId: 4, devicePath: dev }));
  n.runner.verify();
  t.truthy(await stat(join(dir, 'fsid')));
  t.true(await zeroAt(dev, 0));
});

test('osd zap refuses a disk whose label names another OSD or another cluster, and touches nothing', async (t) => {
  const n = await fakeNode(t);
  await n.host.writeConf(n.master.conf);
  const dev = await disk(n, 11 * GiB);
  await writeAt(dev, 0, encodeLabel({ osdUuid: OSD_UUID, meta: finishedMeta(FSID, 9) }));
  await t.throwsAsync(step('ceph.osd.zap')(n.ctx({ osdId: 4, devicePath: dev })), {
    message: `${dev} holds the BlueStore of osd.9 (uuid ${OSD_UUID}), not of osd.4: not zapped`,
  });
  const other = '11111111-2222-3333-4444-555555555555';
  await writeAt(dev, 0, encodeLabel({ osdUuid: OSD_UUID, meta: finishedMeta(other, 4) }));
  await t.throwsAsync(step('ceph.osd.zap')(n.ctx({ osdId: 4, devicePath: dev })), {
    message: `${dev} holds an OSD of cluster ${other}, not of this node's (${FSID}): not zapped`,
  });
  t.is(n.runner.calls.length, 0);
});

test('osd create adopts a disk whose label is this OSD: data dir primed from the label, no blkid, no mkfs', async (t) => {
  const n = await fakeNode(t);
  n.master.keys.push(keyring('osd.3', OSD_KEY));
  const dev = await disk(n, 11 * GiB);
  await writeAt(dev, 0, encodeLabel({ osdUuid: OSD_UUID, meta: finishedMeta(FSID, 3) }));
  const data = n.host.dataDirOf('osd', '3');
  n.runner
    .expect('ceph-bluestore-tool', ['prime-osd-dir', '--dev', dev, '--path', data, `--conf=${n.host.conf}`, '--no-mon-config'])
    .expect('ceph-osd', ['-c', n.host.conf, '-i', '3']);
  t.deepEqual(await step('ceph.osd.create')(n.ctx({ osdId: 3, uuid: OSD_UUID, devicePath: dev })), { osdId: 3, devicePath: dev });
  n.runner.verify();
  t.is(await readlink(join(data, 'block')), dev);
  t.is(await readFile(join(data, 'keyring'), 'utf8'), `[osd.3]\n\tkey = ${OSD_KEY}\n`);
  t.is((await stat(join(data, 'keyring'))).mode & 0o777, 0o600);
  t.true((await lstat(join(data, 'block'))).isSymbolicLink());
  t.true(n.lines.some((l) => /osd\.3: .* already holds its BlueStore .* no mkfs/.test(l.message)));
  t.false(n.lines.some((l) => l.message.includes(OSD_KEY)));
});

test('osd create refuses a disk whose label is another OSD or another cluster, naming it, and runs nothing', async (t) => {
  const n = await fakeNode(t);
  n.master.keys.push(keyring('osd.3', OSD_KEY));
  const dev = await disk(n, GiB);
  const theirs = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
  await writeAt(dev, 0, encodeLabel({ osdUuid: theirs, meta: finishedMeta(FSID, 8) }));
  await t.throwsAsync(step('ceph.osd.create')(n.ctx({ osdId: 3, uuid: OSD_UUID, devicePath: dev })), {
    message: `${dev} holds the BlueStore of osd.8 (uuid ${theirs}, cluster ${FSID}), not of osd.3 (uuid ${OSD_UUID}); wipe it to use it for another OSD`,
  });
  // The run's uuid with another id is not this OSD either.
  await writeAt(dev, 0, encodeLabel({ osdUuid: OSD_UUID, meta: finishedMeta(FSID, 8) }));
  await t.throwsAsync(step('ceph.osd.create')(n.ctx({ osdId: 3, uuid: OSD_UUID, devicePath: dev })), {
    message: /holds the BlueStore of osd\.8/,
  });
  const other = '11111111-2222-3333-4444-555555555555';
  await writeAt(dev, 0, encodeLabel({ osdUuid: OSD_UUID, meta: finishedMeta(other, 3) }));
  await t.throwsAsync(step('ceph.osd.create')(n.ctx({ osdId: 3, uuid: OSD_UUID, devicePath: dev })), {
    message: `${dev} holds the BlueStore of osd.3 (uuid ${OSD_UUID}, cluster ${other}), another cluster than this node's (${FSID}); wipe it first`,
  });
  // A damaged label is not blank either.
  const damaged = encodeLabel({ osdUuid: OSD_UUID, meta: finishedMeta(FSID, 3) });
  damaged.writeUInt8(damaged.readUInt8(100) ^ 0xff, 100);
  await writeAt(dev, 0, damaged);
  await t.throwsAsync(step('ceph.osd.create')(n.ctx({ osdId: 3, uuid: OSD_UUID, devicePath: dev })), {
    message: `${dev} holds a damaged BlueStore label (label checksum does not match); wipe it first`,
  });
  t.is(n.runner.calls.length, 0);
  await t.throwsAsync(stat(join(n.host.dataDirOf('osd', '3'), 'keyring')), { code: 'ENOENT' });
});

test('osd create takes over the id of a destroyed OSD whose data dir is left (its disk died), never one that runs', async (t) => {
  const n = await fakeNode(t);
  n.master.keys.push(keyring('osd.3', OSD_KEY));
  const dev = await disk(n, GiB);
  const dir = await osdDir(n, 3, join(n.dir, 'gone-disk'));
  const old = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
  await writeFile(join(dir, 'fsid'), `${old}\n`);
  await runningOsd(t, n, 3);
  await t.throwsAsync(step('ceph.osd.create')(n.ctx({ osdId: 3, uuid: OSD_UUID, devicePath: dev })), {
    message: `osd.3 runs on this node with fsid ${old}, not ${OSD_UUID}`,
  });
  t.is(await readFile(join(dir, 'fsid'), 'utf8'), `${old}\n`, 'the running OSD keeps its data dir');

  await step('ceph.osd.stop')(n.ctx({ osdId: 3 }));
  n.runner
    .expect('blkid', ['-p', '-o', 'export', dev], { exitCode: 2 })
    .expect('ceph-osd', ['-c', n.host.conf, '-i', '3', '--mkfs', '--osd-uuid', OSD_UUID, '--bluestore-block-path', dev])
    .expect('ceph-osd', ['-c', n.host.conf, '-i', '3']);
  t.deepEqual(await step('ceph.osd.create')(n.ctx({ osdId: 3, uuid: OSD_UUID, devicePath: dev })), { osdId: 3, devicePath: dev });
  n.runner.verify();
  await t.throwsAsync(stat(join(dir, 'fsid')), { code: 'ENOENT' }, "the old OSD's data dir is gone");
  t.is(await readFile(join(dir, 'keyring'), 'utf8'), `[osd.3]\n\tkey = ${OSD_KEY}\n`);
  t.true(n.lines.some((l) => l.message.includes(`the data dir of its earlier OSD (fsid ${old}), not running, removed`)));
});

test('osd create makes BlueStore again over its own label from an unfinished mkfs', async (t) => {
  const n = await fakeNode(t);
  n.master.keys.push(keyring('osd.3', OSD_KEY));
  const dev = await disk(n, GiB);
  await writeAt(dev, 0, encodeLabel({ osdUuid: OSD_UUID, meta: { ceph_fsid: FSID, mkfs_done: 'yes' } }));
  n.runner
    .expect('ceph-osd', ['-c', n.host.conf, '-i', '3', '--mkfs', '--osd-uuid', OSD_UUID, '--bluestore-block-path', dev])
    .expect('ceph-osd', ['-c', n.host.conf, '-i', '3']);
  await step('ceph.osd.create')(n.ctx({ osdId: 3, uuid: OSD_UUID, devicePath: dev }));
  n.runner.verify();
  t.true(n.lines.some((l) => l.message === `${dev}: osd.3's own label from an unfinished mkfs: making its BlueStore again`));
});

test('wipe read-back sees the label magic only at the start of a label block', async (t) => {
  const n = await fakeNode(t);
  const dev = await disk(n, 11 * GiB);
  // The magic a few bytes into the block is not a label: BlueStore writes it at the block's start.
  await writeAt(dev, GiB + 8, Buffer.from(LABEL_MAGIC));
  expectWipe11(n, dev, { writes: false });
  t.deepEqual(await step('disk.wipe')(n.ctx({ devicePath: dev })), { devicePath: dev });
  n.runner.verify();
});
