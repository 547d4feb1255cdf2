// OSDs take a whole disk: BlueStore straight on the block device (`ceph-osd --mkfs` with
// bluestore_block_path = the device), as measured on this kind of machine (docs/real-components.md)
// (ceph-volume lvm needs device-mapper, which these kernels lack; ceph-volume raw would write
// under /var/lib/ceph and chown to the ceph user, which a test cannot redirect). The OSD's small
// data dir holds its keyring and the `block` symlink to the device; everything else is in the
// BlueStore label on the device, so a disk that already holds the OSD being created (its label
// names the run's uuid and id) is adopted: its data dir is primed from the label, no mkfs. Its
// removal: stop, then zap (beside the master's purge, or after it): the data dir goes and the
// disk gets a verified wipe (src/agent/wipe.ts).
import { access, mkdir, readFile, readdir, readlink, realpath, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { keyringFor } from '../master.js';
import { Daemon } from '../../catalogue/index.js';
import { LabelError, readLabel, type BluestoreLabel } from '../bluestore-label.js';
import { blkid, verifiedWipe } from '../wipe.js';
import type { AgentStepContext, AgentStepOf } from './context.js';
import { refreshConf, tool } from './context.js';

export const createOsd: AgentStepOf<'ceph.osd.create'> = async (ctx) => {
  const { osdId: id, uuid, devicePath: device } = ctx.args;
  const conf = await refreshConf(ctx);
  const data = ctx.host.dataDirOf(Daemon.osd, String(id));
  let made = await readFile(join(data, 'fsid'), 'utf8').then(
    (s) => s.trim(),
    () => null,
  );
  if (made !== null && made !== uuid) {
    // The data dir of an earlier OSD of this id: Ceph gave the id to this uuid, so that one was
    // destroyed (its disk died: no zap left its dir) or purged. Stale unless it still runs; its
    // BlueStore is on its own disk, which this does not touch.
    if (await ctx.host.pidOf(Daemon.osd, String(id))) throw new Error(`osd.${id} runs on this node with fsid ${made}, not ${uuid}`);
    await ctx.host.remove(Daemon.osd, String(id));
    ctx.log('info', `osd.${id}: the data dir of its earlier OSD (fsid ${made}), not running, removed: the id is this uuid's now`);
    made = null;
  }
  const holder = await osdOn(ctx, device);
  if (holder !== null && holder !== id) throw new Error(`${device} already holds osd.${holder}`);
  if (made === null) {
    const label = await labelOf(device);
    if (label) mustBeThisOsd(device, label, id, uuid, fsidOf(conf));
    if (label?.complete && label.whoami === id) {
      await adopt(ctx, id, device, data);
    } else {
      if (label) ctx.log('info', `${device}: osd.${id}'s own label from an unfinished mkfs: making its BlueStore again`);
      else await mustBeBlank(ctx, device);
      await ctx.host.writeSecret(join(data, 'keyring'), await keyringFor(ctx.master, `osd.${id}`));
      const mkfs = ['-c', ctx.host.conf, '-i', String(id), '--mkfs', '--osd-uuid', uuid, '--bluestore-block-path', device];
      await ctx.host.explained(`osd.${id}`, () => tool(ctx, 'ceph-osd', mkfs, 300_000));
      ctx.log('info', `osd.${id}: bluestore made on ${device}`);
    }
  }
  const how = await ctx.host.start(Daemon.osd, String(id), [], ctx.signal);
  const cls = ctx.args.deviceClass;
  ctx.log(
    'info',
    `osd.${id}: ${how === 'running' ? 'already running' : 'started'}${cls ? ` (device class ${cls} as the master sees the disk)` : ''}`,
  );
  return { osdId: id, devicePath: device };
};

/** The disk holds this very OSD (a data dir lost with a reinstalled system, a disk moved, an
 * OSD re-declared): its data dir is made again from the label, as ceph-volume's activate does
 * (prime-osd-dir, the `block` symlink, the key), and its store is kept. */
async function adopt<A>(ctx: AgentStepContext<A>, id: number, device: string, data: string): Promise<void> {
  const key = await keyringFor(ctx.master, `osd.${id}`);
  await mkdir(data, { recursive: true, mode: 0o750 });
  // Its own options parser takes `--conf=<file>` (not `-c <file>`: "too many positional options").
  const prime = ['prime-osd-dir', '--dev', device, '--path', data, `--conf=${ctx.host.conf}`, '--no-mon-config'];
  await tool(ctx, 'ceph-bluestore-tool', prime);
  await rm(join(data, 'block'), { force: true });
  await symlink(device, join(data, 'block'));
  await ctx.host.writeSecret(join(data, 'keyring'), key);
  ctx.log('info', `osd.${id}: ${device} already holds its BlueStore (label of this uuid and id): data dir primed from the label, no mkfs`);
}

/** A label of another OSD, or of another cluster, is never made into this one. */
function mustBeThisOsd(device: string, l: BluestoreLabel, id: number, uuid: string, fsid: string | null): void {
  const whose = `osd.${l.whoami ?? '?'} (uuid ${l.osdUuid}${l.cephFsid ? `, cluster ${l.cephFsid}` : ''})`;
  // Ceph prints uuids in lower case; the run's may come in either.
  if (l.osdUuid !== uuid.toLowerCase() || (l.whoami !== null && l.whoami !== id))
    throw new Error(`${device} holds the BlueStore of ${whose}, not of osd.${id} (uuid ${uuid}); wipe it to use it for another OSD`);
  if (fsid !== null && l.cephFsid !== null && l.cephFsid !== fsid)
    throw new Error(`${device} holds the BlueStore of ${whose}, another cluster than this node's (${fsid}); wipe it first`);
}

/** Stops an OSD for good (its removal or replacement goes on to purge or destroy it). */
export const stopOsd: AgentStepOf<'ceph.osd.stop'> = async (ctx) => {
  const id = ctx.args.osdId;
  const stopped = await ctx.host.stop(Daemon.osd, String(id));
  ctx.log('info', `osd.${id}: ${stopped ? 'stopped' : 'was not running'}`);
  return { osdId: id };
};

/** The disk of a purged OSD: its data dir goes, then the disk gets a verified wipe. Refused
 * while the OSD runs from it, and when the disk holds another OSD (device names move between
 * boots: the label says whose disk this really is). Its id may already be another OSD's (a
 * purged id is free for the next `osd new`): a data dir of that id for another disk is left. */
export const zapOsd: AgentStepOf<'ceph.osd.zap'> = async (ctx) => {
  const { osdId: id, devicePath: device } = ctx.args;
  const holder = await osdOn(ctx, device);
  if (holder !== null && holder !== id) throw new Error(`${device} holds osd.${holder}, not osd.${id}`);
  const label = await labelOf(device).catch((err: unknown) => {
    if (err instanceof LabelError) return null; // a damaged label names nobody: it is wiped
    throw err;
  });
  if (label?.whoami != null && label.whoami !== id)
    throw new Error(`${device} holds the BlueStore of osd.${label.whoami} (uuid ${label.osdUuid}), not of osd.${id}: not zapped`);
  const fsid = fsidOf(await readFile(ctx.host.conf, 'utf8').catch(() => ''));
  if (label?.cephFsid && fsid && label.cephFsid !== fsid)
    throw new Error(`${device} holds an OSD of cluster ${label.cephFsid}, not of this node's (${fsid}): not zapped`);
  const user = await runningFrom(ctx, holder, label);
  if (user !== null) throw new Error(`osd.${user} still runs: stop it before zapping its disk`);
  if (holder !== null) {
    await ctx.host.remove(Daemon.osd, String(holder));
    ctx.log('info', `osd.${holder}: data dir removed from this node`);
  }
  await verifiedWipe(ctx, device);
  return { devicePath: device };
};

/** Wipes a disk the master has asked about. An OSD that runs from it is never wiped under it;
 * a stopped one's (a destroyed OSD whose disk is wiped afterwards) data dir goes with the disk. */
export const wipeDisk: AgentStepOf<'disk.wipe'> = async (ctx) => {
  const device = ctx.args.devicePath;
  const holder = await osdOn(ctx, device);
  const user = await runningFrom(ctx, holder, await readLabel(device).catch(() => null));
  if (user !== null) throw new Error(`${device} holds osd.${user}, which runs: destroy the OSD before wiping the disk`);
  if (holder !== null) {
    await ctx.host.remove(Daemon.osd, String(holder));
    ctx.log('info', `osd.${holder}: not running; its data dir removed from this node with its disk's wipe`);
  }
  await verifiedWipe(ctx, device);
  return { devicePath: device };
};

/** The OSD running from the disk, if any: the one whose data dir points at it, or the one its
 * label names (reached by another path) unless that id now runs from another OSD's data dir
 * (a replacement took the id: its uuid differs from the label's). */
async function runningFrom<A>(ctx: AgentStepContext<A>, holder: number | null, label: BluestoreLabel | null): Promise<number | null> {
  if (holder !== null && (await ctx.host.pidOf(Daemon.osd, String(holder)))) return holder;
  const named = label?.whoami ?? null;
  if (named === null || named === holder || !(await ctx.host.pidOf(Daemon.osd, String(named)))) return null;
  const uuid = await readFile(join(ctx.host.dataDirOf(Daemon.osd, String(named)), 'fsid'), 'utf8').then(
    (s) => s.trim(),
    () => null,
  );
  return uuid === null || uuid === label!.osdUuid ? named : null;
}

/** The label at the head of the device; the device must exist. */
async function labelOf(device: string): Promise<BluestoreLabel | null> {
  await access(device).catch(() => {
    throw new Error(`no disk at ${device} on this node`);
  });
  try {
    return await readLabel(device);
  } catch (err) {
    if (err instanceof LabelError) throw new LabelError(`${device} holds a damaged BlueStore label (${err.message}); wipe it first`);
    throw err;
  }
}

/** The OSD of this node whose `block` symlink points at the device (the same device node,
 * whichever path names it), if any. */
async function osdOn<A>(ctx: AgentStepContext<A>, device: string): Promise<number | null> {
  const root = join(ctx.host.opts.dataDir, Daemon.osd);
  const real = await realpath(device).catch(() => device);
  for (const dir of await readdir(root).catch(() => [] as string[])) {
    const target = await readlink(join(root, dir, 'block')).catch(() => null);
    const m = /^ceph-(\d+)$/.exec(dir);
    if (!m || target === null) continue;
    if (target === device || (await realpath(target).catch(() => target)) === real) return Number(m[1]);
  }
  return null;
}

/** ceph-volume's refusal, the same way: a device with any signature (filesystem, partition
 * table, an old OSD's label) is not taken. */
async function mustBeBlank<A>(ctx: AgentStepContext<A>, device: string): Promise<void> {
  const found = await blkid(ctx, device);
  if (found !== null) throw new Error(`${device} is not blank: it has ${found}; wipe it first`);
}

const fsidOf = (conf: string): string | null => /^fsid\s*=\s*(\S+)/m.exec(conf)?.[1] ?? null;
