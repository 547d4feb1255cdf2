// An OSD's disk on real Ceph, through the agent's steps and inventory, on one node of this
// machine (root, a loop device over an 11 GiB sparse file, so BlueStore label offsets 1 GiB and
// 10 GiB exist): the inventory reads the label of a real OSD as ceph-bluestore-tool prints it;
// an OSD whose data dir is lost is adopted from its disk (same id, same data, no mkfs) and a
// disk of another uuid is refused; the zap after a purge removes the label and the copies
// planted at 1 and 10 GiB, blkid finds nothing; and a wipe whose zeroes never reach one offset
// fails naming it.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LABEL_MAGIC, readBlock } from '../../src/agent/bluestore-label.js';
import { readInventory } from '../../src/agent/inventory.js';
import { agentSteps } from '../../src/agent/steps/index.js';
import { DAEMONS } from '../../src/catalogue/index.js';
import { CommandError } from '../../src/errors.js';
import { displayCommand, type Runner } from '../../src/exec/runner.js';
import { OSD_CAPS } from '../../reconcilers/osd/plan.js';
import { monitorAnswer, newKey, sandbox, until, type Sandbox } from './node-sandbox.js';

const steps = agentSteps();
const GiB = 2 ** 30;
const COPIES = [GiB, 10 * GiB];

/** Runs a step on the node; `runner` in place of the node's (to record or to fail commands). */
const run = (s: Sandbox, name: string, args: Record<string, unknown>, runner?: Runner) =>
  steps.get(name)!({ ...s.ctx(args), ...(runner ? { runner } : {}) });

/** The node's runner, each command line kept. */
function recording(s: Sandbox): { runner: Runner; seen: string[] } {
  const seen: string[] = [];
  return {
    seen,
    runner: {
      run: (cmd, args, opts) => {
        seen.push(displayCommand(cmd, args));
        return s.runner.run(cmd, args, opts);
      },
    },
  };
}

async function plant(device: string, block: Buffer, offsets: number[]): Promise<void> {
  const fh = await open(device, 'r+');
  try {
    for (const o of offsets) await fh.write(block, 0, block.length, o);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

const isLabel = async (device: string, offset: number): Promise<boolean> =>
  (await readBlock(device, offset)).subarray(0, LABEL_MAGIC.length).toString('latin1') === LABEL_MAGIC;

async function blkidFinds(s: Sandbox, device: string): Promise<string | null> {
  try {
    return (await s.runner.run('blkid', ['-p', '-o', 'export', device], { timeoutMs: 10_000 })).stdout;
  } catch (err) {
    if (err instanceof CommandError && err.exitCode === 2) return null;
    throw err;
  }
}

test('osd disk: label in the inventory, adoption without mkfs, refusal of another uuid, zap and a wipe that fails naming the offset', async (t) => {
  const s = await sandbox(t, 11);
  const dev = s.device;
  const adminKeyring = join(s.dir, 'admin.keyring');
  const rados = (...verb: string[]) =>
    s.runner.run('rados', ['-c', s.host.conf, '-n', 'client.admin', '-k', adminKeyring, ...verb], { timeoutMs: 60_000 });

  await run(s, 'ceph.mon.bootstrap', { fsid: s.fsid, monName: 'a', addr: '127.0.0.1', monPort: s.port, devicePath: await s.addDisk() });
  await monitorAnswer(s);
  await s.importAdmin();
  await until(
    'quorum',
    () => s.admin.monStat({ timeoutMs: 10_000 }),
    (m) => m.quorum.length === 1,
  );

  // A manager: the removal's `osd purge` waits for one.
  const mgrCaps = { ...DAEMONS.mgr.caps };
  s.master.add('mgr.a', (await s.admin.authGetOrCreate('mgr.a', mgrCaps)).key, mgrCaps);
  await run(s, 'ceph.mgr.start', { name: 'a', fsid: s.fsid });

  // A real OSD on the loop device, and an object on it.
  const uuid = randomUUID();
  const secret = newKey();
  const osdId = await s.admin.osdNew(uuid, { cephxSecret: secret });
  s.master.add(`osd.${osdId}`, secret, { ...OSD_CAPS });
  await run(s, 'ceph.osd.create', { osdId, uuid, devicePath: dev, sizeBytes: 11 * GiB });
  const up = () =>
    until(
      `osd.${osdId} up`,
      () => s.admin.osdDump({ timeoutMs: 10_000 }),
      (d) => d.osds.some((o) => o.id === osdId && o.up),
    );
  await up();
  await s.admin.poolCreate('qdisk', 8);
  const object = join(s.dir, 'object');
  await writeFile(object, `written before the data dir was lost ${randomUUID()}\n`);
  await rados('-p', 'qdisk', 'put', 'o1', object);

  // The inventory reads the label, as ceph-bluestore-tool prints it.
  const shown = JSON.parse(
    (await s.runner.run('ceph-bluestore-tool', ['show-label', '--dev', dev], { timeoutMs: 30_000 })).stdout,
  ) as Record<string, { osd_uuid: string; ceph_fsid: string; whoami: string }>;
  const truth = shown[dev]!;
  const inv = await readInventory(s.runner);
  const disk = inv.disks.find((d) => d.devicePath === dev);
  t.deepEqual(disk?.bluestore, { fsid: truth.ceph_fsid, osdUuid: truth.osd_uuid, osdId: Number(truth.whoami) });
  t.deepEqual(disk?.bluestore, { fsid: s.fsid, osdUuid: uuid, osdId });
  t.true(disk?.hasFilesystem);

  // The data dir is lost (a reinstalled system): a create of another uuid on the disk is refused.
  await run(s, 'ceph.osd.stop', { osdId });
  await rm(s.host.dataDirOf('osd', String(osdId)), { recursive: true, force: true });
  const stranger = randomUUID();
  await t.throwsAsync(run(s, 'ceph.osd.create', { osdId: osdId + 1, uuid: stranger, devicePath: dev }), {
    message: `${dev} holds the BlueStore of osd.${osdId} (uuid ${uuid}, cluster ${s.fsid}), not of osd.${osdId + 1} (uuid ${stranger}); wipe it to use it for another OSD`,
  });

  // Its own uuid and id: adopted, no mkfs; the same OSD comes back with its data.
  const adopting = recording(s);
  await run(s, 'ceph.osd.create', { osdId, uuid, devicePath: dev }, adopting.runner);
  t.false(
    adopting.seen.some((c) => c.includes('--mkfs')),
    adopting.seen.join('\n'),
  );
  t.true(adopting.seen.some((c) => c.startsWith('ceph-bluestore-tool') && c.includes('prime-osd-dir')));
  await up();
  const dump = await s.admin.osdDump();
  t.deepEqual(
    dump.osds.map((o) => [o.id, o.uuid]),
    [[osdId, uuid]],
  );
  await rados('-p', 'qdisk', 'get', 'o1', join(s.dir, 'read-back'));
  t.is(await readFile(join(s.dir, 'read-back'), 'utf8'), await readFile(object, 'utf8'));

  // Removal: stop, purge (the master's), then the zap wipes every copy of the label.
  await run(s, 'ceph.osd.stop', { osdId });
  t.deepEqual(await s.admin.osdPurge(osdId), { removed: true });
  await plant(dev, await readBlock(dev, 0), COPIES);
  for (const o of [0, ...COPIES]) t.true(await isLabel(dev, o), `a label at ${o} before the zap`);
  t.truthy(await blkidFinds(s, dev));
  await run(s, 'ceph.osd.zap', { osdId, devicePath: dev });
  for (const o of [0, ...COPIES]) t.false(await isLabel(dev, o), `no label at ${o} after the zap`);
  t.is(await blkidFinds(s, dev), null);
  await t.throwsAsync(stat(s.host.dataDirOf('osd', String(osdId))), { code: 'ENOENT' });
  t.is((await readInventory(s.runner)).disks.find((d) => d.devicePath === dev)?.bluestore, undefined);

  // A disk whose writes at 10 GiB are lost (dd "succeeds", nothing changes): the wipe fails
  // naming that offset, the others are blank.
  await plant(dev, Buffer.from(`${LABEL_MAGIC}planted`, 'latin1'), [0, ...COPIES]);
  const lossy: Runner = {
    run: (cmd, args, opts) =>
      cmd === 'dd' && args.includes(`seek=${(10 * GiB) / 4096}`)
        ? Promise.resolve({ stdout: '', stderr: '', exitCode: 0 })
        : s.runner.run(cmd, args, opts),
  };
  await t.throwsAsync(run(s, 'disk.wipe', { devicePath: dev }, lossy), {
    message: `${dev} is not blank after the wipe: a BlueStore label at 10 GiB (offset ${10 * GiB})`,
  });
  t.false(await isLabel(dev, 0));
  t.false(await isLabel(dev, GiB));
  // The real disk takes the zeroes: wiped and verified.
  await run(s, 'disk.wipe', { devicePath: dev });
  t.false(await isLabel(dev, 10 * GiB));
  t.is(await blkidFinds(s, dev), null);

  // No secret went into a step's log.
  const logged = s.lines.map((l) => l.message).join('\n');
  t.false(logged.includes(secret));
  t.false(logged.includes(s.adminKey));
});
