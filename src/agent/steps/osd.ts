// OSDs take a whole disk: BlueStore straight on the block device (`ceph-osd --mkfs` with
// bluestore_block_path = the device), as measured on this kind of machine (docs/real-components.md)
// (ceph-volume lvm needs device-mapper, which these kernels lack; ceph-volume raw would write
// under /var/lib/ceph and chown to the ceph user, which a test cannot redirect). The OSD's small
// data dir holds its keyring and the `block` symlink to the device. And wiping a disk: wipefs
// plus zeroes over the head, so no old BlueStore label or partition table is found again.
import { access, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CommandError } from '../../errors.js';
import { keyringFor } from '../master.js';
import { Daemon } from '../../catalogue/index.js';
import type { AgentStepContext, AgentStepOf } from './context.js';
import { refreshConf, tool } from './context.js';

/** How much of the head of a wiped disk is zeroed (labels, partition tables, BlueStore's). */
const WIPE_HEAD_MIB = 16;

export const createOsd: AgentStepOf<'ceph.osd.create'> = async (ctx) => {
  const { osdId: id, uuid, devicePath: device } = ctx.args;
  await refreshConf(ctx);
  const data = ctx.host.dataDirOf(Daemon.osd, String(id));
  const made = await readFile(join(data, 'fsid'), 'utf8').then(
    (s) => s.trim(),
    () => null,
  );
  if (made !== null && made !== uuid) throw new Error(`osd.${id} exists on this node with fsid ${made}, not ${uuid}`);
  const holder = await osdOn(ctx, device);
  if (holder !== null && holder !== id) throw new Error(`${device} already holds osd.${holder}`);
  if (made === null) {
    await mustBeBlank(ctx, device);
    await ctx.host.writeSecret(join(data, 'keyring'), await keyringFor(ctx.master, `osd.${id}`));
    const mkfs = ['-c', ctx.host.conf, '-i', String(id), '--mkfs', '--osd-uuid', uuid, '--bluestore-block-path', device];
    await ctx.host.explained(`osd.${id}`, () => tool(ctx, 'ceph-osd', mkfs, 300_000));
    ctx.log('info', `osd.${id}: bluestore made on ${device}`);
  }
  const how = await ctx.host.start(Daemon.osd, String(id), [], ctx.signal);
  const cls = ctx.args.deviceClass;
  ctx.log(
    'info',
    `osd.${id}: ${how === 'running' ? 'already running' : 'started'}${cls ? ` (device class ${cls} as the master sees the disk)` : ''}`,
  );
  return { osdId: id, devicePath: device };
};

/** Stops an OSD for good (its removal or replacement goes on to purge or destroy it). */
export const stopOsd: AgentStepOf<'ceph.osd.stop'> = async (ctx) => {
  const id = ctx.args.osdId;
  const stopped = await ctx.host.stop(Daemon.osd, String(id));
  ctx.log('info', `osd.${id}: ${stopped ? 'stopped' : 'was not running'}`);
  return { osdId: id };
};

/** The disk of a purged or destroyed OSD: its data dir goes, then the disk is wiped. */
export const zapOsd: AgentStepOf<'ceph.osd.zap'> = async (ctx) => {
  const { osdId: id, devicePath: device } = ctx.args;
  const holder = await osdOn(ctx, device);
  if (holder !== null && holder !== id) throw new Error(`${device} holds osd.${holder}, not osd.${id}`);
  if (await ctx.host.pidOf(Daemon.osd, String(id))) throw new Error(`osd.${id} still runs: stop it before zapping its disk`);
  await rm(ctx.host.dataDirOf(Daemon.osd, String(id)), { recursive: true, force: true });
  await wipe(ctx, device);
  return { devicePath: device };
};

export const wipeDisk: AgentStepOf<'disk.wipe'> = async (ctx) => {
  const device = ctx.args.devicePath;
  const holder = await osdOn(ctx, device);
  if (holder !== null) throw new Error(`${device} holds osd.${holder}: destroy the OSD before wiping the disk`);
  await wipe(ctx, device);
  return { devicePath: device };
};

async function wipe<A>(ctx: AgentStepContext<A>, device: string): Promise<void> {
  if (await mounted(device)) throw new Error(`${device} is mounted`);
  await tool(ctx, 'wipefs', ['--all', device]);
  await tool(ctx, 'dd', ['if=/dev/zero', `of=${device}`, 'bs=1M', `count=${WIPE_HEAD_MIB}`, 'conv=fsync,notrunc', 'status=none']);
  ctx.log('info', `${device}: signatures erased, first ${WIPE_HEAD_MIB} MiB zeroed`);
}

/** The OSD of this node whose `block` symlink points at the device, if any. */
async function osdOn<A>(ctx: AgentStepContext<A>, device: string): Promise<number | null> {
  const root = join(ctx.host.opts.dataDir, Daemon.osd);
  for (const dir of await readdir(root).catch(() => [] as string[])) {
    const target = await readlink(join(root, dir, 'block')).catch(() => null);
    const m = /^ceph-(\d+)$/.exec(dir);
    if (m && target === device) return Number(m[1]);
  }
  return null;
}

/** ceph-volume's refusal, the same way: a device with any signature (filesystem, partition
 * table, an old OSD's label) is not taken. blkid exits 2 when it finds nothing. */
async function mustBeBlank<A>(ctx: AgentStepContext<A>, device: string): Promise<void> {
  await access(device).catch(() => {
    throw new Error(`no disk at ${device} on this node`);
  });
  try {
    const { stdout } = await tool(ctx, 'blkid', ['-p', '-o', 'export', device]);
    const type = /^(?:TYPE|PTTYPE)=(.*)$/m.exec(stdout)?.[1] ?? 'a signature';
    throw new Error(`${device} is not blank: it has ${type}; wipe it first`);
  } catch (err) {
    if (err instanceof CommandError && err.exitCode === 2) return;
    throw err;
  }
}

async function mounted(device: string): Promise<boolean> {
  const mounts = await readFile('/proc/mounts', 'utf8').catch(() => '');
  return mounts.split('\n').some((l) => l.split(' ')[0] === device || l.split(' ')[0]?.startsWith(`${device}p`) === true);
}
