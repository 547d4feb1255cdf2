// Node-level steps for the Ceph loops, as the lab's agents carry them out: each changes the
// simulated cluster the way the real commands on that node would (ceph-mon --mkfs + start,
// ceph-volume + ceph-osd, systemctl restart, wipefs), then refreshes what the machine's agent
// reports as running. Register with `for (const [n, s] of cephSteps(...)) lab.defineStep(n, s)`.
import {
  DAEMONS,
  Daemon,
  DISK_DAEMON_TYPE,
  Step as Steps,
  type NodeStepName,
  type PowerStepName,
  type StepArgs,
  type StepResult,
} from '../../catalogue/index.js';
import type { DaemonReport } from '../../fleet/types.js';
import type { MachineSpec, SimDisk } from '../machines.js';
import { checkedSteps, type SimStepOf, type Step, type StepContext } from '../steps.js';
import { monDiskGone, type SimCephCluster } from './cluster.js';
import type { DeviceClass, SimAuthEntity } from './model.js';
import { parseKeyring } from './keys.js';

export interface CephStepHooks {
  /** The machine's hostname: its OSDs go under this CRUSH host bucket. */
  hostnameOf(machine: MachineSpec): string;
  /** The machine's reported daemons (SimMachine.daemons), kept equal to what runs there. */
  daemonsOf(machine: MachineSpec): DaemonReport;
}

/** Every node step but the machine's power (src/sim/steps.ts): a missing one is a type error. */
type CephSteps = { [K in Exclude<NodeStepName, PowerStepName>]: SimStepOf<K> };

export function cephSteps(cluster: SimCephCluster, hooks: CephStepHooks): Map<string, Step> {
  // Generic in the arguments and result alone: each use is typed by CephSteps below.
  const step =
    <A, R>(body: (ctx: StepContext<A>, host: string) => R | Promise<R>) =>
    async (ctx: StepContext<A>): Promise<Exclude<R, void> | undefined> => {
      const host = hooks.hostnameOf(ctx.machine);
      try {
        // A step that returns nothing answers undefined, as the result's type says.
        return ((await body(ctx, host)) ?? undefined) as Exclude<R, void> | undefined;
      } finally {
        Object.assign(hooks.daemonsOf(ctx.machine), cluster.hosts.report(host));
      }
    };
  const bootstrapped = () => {
    if (!cluster.mons.bootstrapped) throw new Error('the cluster has no monmap yet: bootstrap the first monitor');
  };

  const steps: CephSteps = {
    [Steps.monBootstrap]: step(async (ctx, host) => {
      const { fsid, monName: name, addr } = ctx.args;
      const members = ctx.args.initialMembers?.map((m) => ({ name: m.name, addr: m.addr }));
      monDisk(cluster, ctx.machine, host, name, ctx.args.devicePath);
      // The agent's mkfs keyring: the mon. key the master handed this node, nothing else.
      cluster.bootstrap(fsid, { name, addr, host }, members, await monKeyring(ctx));
      cluster.startMon(name);
      ctx.log(
        'info',
        `mon.${name}: mkfs for cluster ${fsid} (first monitors: ${(members ?? [{ name }]).map((m) => m.name).join(', ')}), started on ${addr}`,
      );
      return { fsid, monmapEpoch: cluster.mons.epoch };
    }),
    [Steps.monJoin]: step(async (ctx, host) => {
      const { monName: name, addr } = ctx.args;
      bootstrapped();
      const keyring = await monKeyring(ctx);
      if (keyring) cluster.checkMonKey(name, keyring);
      // mkfs needs the current monmap and the mon. key, which only a quorum hands out.
      if (!cluster.mons.get(name) && !cluster.hasQuorum()) {
        throw new Error(`mon.${name}: cannot fetch the monmap: the cluster has no quorum (monclient(hunting): authenticate timed out)`);
      }
      monDisk(cluster, ctx.machine, host, name, ctx.args.devicePath);
      cluster.addMonToMap(name, addr, host);
      cluster.startMon(name);
      ctx.log('info', `mon.${name}: joined the monmap (epoch ${cluster.mons.epoch}) and started on ${addr}`);
      return { monmapEpoch: cluster.mons.epoch };
    }),
    [Steps.monRemove]: step((ctx, host) => {
      // systemctl stop + rm -rf of the store: both succeed when there is nothing left to do.
      const name = ctx.args.monName;
      const mon = cluster.mons.get(name);
      if (mon && mon.host !== undefined && mon.host !== host) throw new Error(`mon.${name} runs on ${mon.host}, not on ${host}`);
      if (mon?.running) cluster.stopMon(name);
      ctx.log('info', `systemctl stop ceph-mon@${name}`);
      const stored = cluster.monStores.get(name) === host;
      if (stored) cluster.monStores.delete(name);
      // Unmounted and its filesystem erased: the disk is blank and eligible again.
      const disk = cluster.monDisks.get(name);
      if (disk?.host === host) {
        cluster.monDisks.delete(name);
        const d = ctx.machine.disks.find((x) => x.serial === disk.serial && !x.dead);
        if (d) d.hasFilesystem = false;
        ctx.log('info', `umount ${disk.devicePath}; wipefs --all ${disk.devicePath}${d ? '' : ' (the disk is gone: forgotten)'}`);
      }
      ctx.log('info', `rm -rf /var/lib/ceph/mon/ceph-${name}${stored ? '' : ' (nothing there)'}`);
      return { monName: name, inMonmap: mon !== undefined, storeRemoved: stored };
    }),
    [DAEMONS.mgr.steps.start]: step(async (ctx, host) => {
      bootstrapped();
      await daemonKey(cluster, ctx, DAEMONS.mgr.entity(ctx.args.name));
      cluster.startMgr(ctx.args.name, host);
    }),
    [DAEMONS.mds.steps.start]: step(async (ctx, host) => {
      bootstrapped();
      await daemonKey(cluster, ctx, DAEMONS.mds.entity(ctx.args.name));
      cluster.startMds(ctx.args.name, host, ctx.machine.ip);
    }),
    [DAEMONS.mgr.steps.stop]: step((ctx, host) => {
      const m = cluster.mgrs.daemons.get(ctx.args.name);
      if (m?.running && m.host === host) cluster.stopMgr(ctx.args.name);
      ctx.log('info', `systemctl stop ceph-mgr@${ctx.args.name}`);
    }),
    [DAEMONS.mds.steps.stop]: step((ctx, host) => {
      const m = cluster.fsmap.mds.get(ctx.args.name);
      if (m?.running && m.host === host) cluster.stopMds(ctx.args.name);
      ctx.log('info', `systemctl stop ceph-mds@${ctx.args.name}`);
    }),
    [DAEMONS.rgw.steps.start]: step(async (ctx, host) => {
      bootstrapped();
      await daemonKey(cluster, ctx, DAEMONS.rgw.entity(ctx.args.name));
      cluster.startRgw(ctx.args.name, ctx.args.port, host);
    }),
    [DAEMONS.rgw.steps.stop]: step((ctx, host) => {
      // systemctl stop of a unit that is not running succeeds; so does this.
      const name = ctx.args.name;
      const r = cluster.rgws.get(name);
      if (r?.running && r.host === host) cluster.stopRgw(name);
      ctx.log('info', `systemctl stop ceph-radosgw@rgw.${name}`);
    }),
    [DAEMONS.nfs.steps.start]: step(async (ctx, host) => {
      bootstrapped();
      const { name, export: fs, path = '/', port = DAEMONS.nfs.startArgs.port } = ctx.args;
      // ganesha with an export of a filesystem that does not exist serves nothing: a failed start.
      if (!cluster.fsmap.get(fs)) throw new Error(`filesystem ${fs} does not exist: the export failed`);
      await daemonKey(cluster, ctx, DAEMONS.nfs.entity(name));
      cluster.startProcess(Daemon.nfs, name, host);
      ctx.log('info', `ganesha.nfsd: NFSv4 on ${ctx.machine.ip}:${port}, /${fs} is ${fs}:${path}`);
      return { name, export: fs, path, pseudo: `/${fs}`, endpoint: `${ctx.machine.ip}:${port}` };
    }),
    [DAEMONS.nfs.steps.stop]: step((ctx) => {
      cluster.stopProcess(Daemon.nfs, ctx.args.name);
      ctx.log('info', `ganesha.nfsd of ${DAEMONS.nfs.entity(ctx.args.name)} stopped`);
    }),
    [Steps.osdCreate]: step(async (ctx, host) => {
      const id = ctx.args.osdId;
      // ceph-osd --mkfs (or the start of an adopted OSD) authenticates with the key the master
      // registered (`osd new -i`).
      if (!osdOn(cluster, host, ctx.args.devicePath)) await daemonKey(cluster, ctx, DAEMONS.osd.entity(String(id)));
      return createOsd(cluster, ctx, host);
    }),
    [Steps.daemonRestart]: step((ctx, host) => {
      const kind = ctx.args.daemon;
      const name =
        kind === DISK_DAEMON_TYPE
          ? String(ctx.args.id ?? required(ctx.args.name, 'name').replace(/^osd\./, ''))
          : required(ctx.args.name, 'name');
      const d = cluster.hosts.all().find((x) => x.kind === kind && x.name === name);
      if (!d || d.host !== host) throw new Error(`there is no ${kind}.${name} on ${host}`);
      const disk = kind === Daemon.mon ? cluster.monDisks.get(name) : undefined;
      if (disk?.gone) throw new Error(monDiskGone(name, disk));
      // An OSD whose disk died has nothing to start from.
      const dev = kind === DISK_DAEMON_TYPE ? cluster.osdmap.osds.get(Number(name))?.devicePath : undefined;
      if (dev !== undefined) diskAt(ctx.machine, dev);
      cluster.hosts.restart(kind, name);
      ctx.log('info', `systemctl restart ceph-${kind}@${name}`);
    }),
    [Steps.configRestart]: step((ctx, host) => {
      const restarted: string[] = [];
      for (const { daemon: kind, name } of ctx.args.daemons) {
        const d = cluster.hosts.all().find((x) => x.kind === kind && x.name === name);
        if (!d || d.host !== host) throw new Error(`there is no ${kind}.${name} on ${host}`);
        cluster.hosts.restart(kind, name);
        restarted.push(`${kind}.${name}`);
        ctx.log('info', `systemctl restart ceph-${kind}@${name} (config ${ctx.args.config})`);
      }
      return { restarted };
    }),
    [Steps.osdStop]: step((ctx, host) => {
      // systemctl stop: a unit that does not run (stopped, purged) is success. The disk keeps
      // its BlueStore label until it is zapped.
      const id = ctx.args.osdId;
      const o = cluster.osdmap.osds.get(id);
      if (o?.host !== undefined && o.host !== host) throw new Error(`osd.${id} runs on ${o.host}, not on ${host}`);
      if (o?.up) cluster.stopOsd(id);
      ctx.log('info', `systemctl stop ceph-osd@${id}${o?.up ? '' : ' (it was not running)'}`);
      return { osdId: id };
    }),
    [Steps.osdZap]: step((ctx, host) => {
      const { osdId: id, devicePath } = ctx.args;
      const disk = diskAt(ctx.machine, devicePath);
      const holder = osdOn(cluster, host, devicePath);
      if (holder !== undefined && holder !== id) throw new Error(`${devicePath} holds osd.${holder}, not osd.${id}`);
      const label = disk.bluestore;
      if (label && label.osdId !== id) throw new Error(`${devicePath} carries the BlueStore label of osd.${label.osdId}, not osd.${id}`);
      if (cluster.osdmap.osds.get(id)?.up) throw new Error(`osd.${id} still runs: stop it before zapping its disk`);
      verifiedWipe(ctx, disk);
      forget(cluster, host, devicePath);
      return { devicePath };
    }),
    // The real agent's order (src/agent/steps/maintenance.ts): gateways, MDS, manager, OSDs,
    // the monitor last; started again in reverse.
    [Steps.nodeDaemonsStop]: step((ctx, host) => {
      const stopped = cluster.hosts.stopForMaintenance(host, MAINTENANCE_STOP_ORDER);
      for (const d of stopped) ctx.log('info', `systemctl stop ceph-${d.replace('.', '@')}`);
      return { stopped: stopped.map(entityName) };
    }),
    [Steps.nodeDaemonsStart]: step((ctx, host) => {
      const started = cluster.hosts.startAfterMaintenance(host, MAINTENANCE_STOP_ORDER);
      for (const d of started) ctx.log('info', `systemctl start ceph-${d.replace('.', '@')}`);
      return { started: started.map(entityName) };
    }),
    [Steps.wipe]: step((ctx, host) => {
      const disk = diskAt(ctx.machine, ctx.args.devicePath);
      if (disk.isSystem) throw new Error(`${disk.devicePath} is the system disk`);
      const holder = osdOn(cluster, host, disk.devicePath);
      // A destroyed OSD's disk may be wiped: its data is forgotten by Ceph already.
      if (holder !== undefined && !cluster.osdmap.osds.get(holder)?.destroyed)
        throw new Error(`${disk.devicePath} holds osd.${holder}: destroy the OSD before wiping the disk`);
      verifiedWipe(ctx, disk);
      forget(cluster, host, disk.devicePath);
      return { devicePath: disk.devicePath };
    }),
  };
  return checkedSteps(steps);
}

const MAINTENANCE_STOP_ORDER = [Daemon.rgw, Daemon.nfs, Daemon.mds, Daemon.mgr, Daemon.osd, Daemon.mon] as const;

/** `osd.3` stays; `mon.node-1` as Ceph names it (DAEMONS' entity). */
function entityName(d: string): string {
  const dot = d.indexOf('.');
  const kind = d.slice(0, dot) as keyof typeof DAEMONS;
  return DAEMONS[kind].entity(d.slice(dot + 1));
}

/** The agent's monitor disk (src/agent/mon-disk.ts): a blank disk of this machine gets the
 * store's filesystem and is recorded; a retry finds its own; anything else is refused. (The real
 * agent refuses a step without a disk; the lab's step tests predate it.) */
function monDisk(cluster: SimCephCluster, machine: MachineSpec, host: string, name: string, devicePath: string | undefined): void {
  // The loops always name the disk; a step run by hand without one keeps the store in the data
  // dir, as a monitor made before its disk was used does on the real agent.
  if (!devicePath) return;
  const disk = machine.disks.find((d) => d.devicePath === devicePath && !d.dead);
  if (!disk) throw new Error(`no disk at ${devicePath} on this node`);
  const mine = cluster.monDisks.get(name);
  if (mine && mine.host === host) {
    if (mine.serial !== disk.serial) throw new Error(`mon.${name}'s store is on ${mine.devicePath}, not on ${devicePath}`);
    return;
  }
  if (disk.isSystem) throw new Error(`${devicePath} is the system disk`);
  const holder = osdOn(cluster, host, devicePath);
  if (holder !== undefined) throw new Error(`${devicePath} holds osd.${holder}`);
  if (disk.hasFilesystem) throw new Error(`${devicePath} is not blank: it has a filesystem; wipe it first`);
  disk.hasFilesystem = true;
  cluster.monDisks.set(name, { host, serial: disk.serial, devicePath, gone: false });
}

/** An argument the schema leaves optional but this use needs. */
function required<T>(v: T | undefined, key: string): T {
  if (v === undefined) throw new Error(`argument ${key} is required`);
  return v;
}

/** The keys the master hands this node's agent, parsed; undefined on a link that carries
 * none (the lab's in-process one). */
async function keysOf<A>(ctx: StepContext<A>): Promise<SimAuthEntity[] | undefined> {
  if (!ctx.keyrings) return undefined;
  return (await ctx.keyrings()).flatMap((k) => parseKeyring(k.keyring));
}

/** A monitor's mkfs keyring as the agent writes it: the `mon.` key alone. */
async function monKeyring<A>(ctx: StepContext<A>): Promise<SimAuthEntity[] | undefined> {
  const keys = await keysOf(ctx);
  if (!keys) return undefined;
  const mon = keys.find((e) => e.entity === 'mon.');
  if (!mon) throw new Error('the master holds no mon. key for this monitor');
  return [mon];
}

/** A daemon starts with its own key, fetched from the master as the agent does; Ceph refuses
 * one the auth database does not know. */
async function daemonKey<A>(cluster: SimCephCluster, ctx: StepContext<A>, entity: string): Promise<void> {
  const keys = await keysOf(ctx);
  if (!keys) return;
  const mine = keys.find((e) => e.entity === entity);
  if (!mine) throw new Error(`the master holds no key of ${entity} for this node (was its key created?)`);
  if (!cluster.accounts.authenticates(entity, mine.key))
    throw new Error(`${entity}: monclient(hunting): authenticate failed: (13) Permission denied`);
}

/** ceph-volume prepare + activate on a whole disk for an id `osd new` gave out, then start. A
 * disk whose BlueStore label is this OSD's (same uuid) is adopted: no mkfs, the data dir is
 * primed from the label and the OSD starts; a label of another OSD is refused. */
function createOsd(cluster: SimCephCluster, ctx: StepContext<StepArgs<'ceph.osd.create'>>, host: string): StepResult<'ceph.osd.create'> {
  const { osdId: id, uuid, devicePath } = ctx.args;
  const disk = diskAt(ctx.machine, devicePath);
  const holder = osdOn(cluster, host, devicePath);
  if (holder !== undefined && holder !== id) throw new Error(`${devicePath} already holds osd.${holder}`);
  const label = disk.bluestore;
  if (label && label.osdUuid !== uuid) {
    throw new Error(
      `${devicePath} carries BlueStore of osd.${label.osdId} (osd uuid ${label.osdUuid}, cluster ${label.fsid}), not of ${uuid}: zap the disk to reuse it`,
    );
  }
  if (label && label.fsid !== cluster.fsid) throw new Error(`${devicePath} carries BlueStore of another cluster (${label.fsid})`);
  if (!label && holder === undefined) {
    if (disk.isSystem) throw new Error(`${devicePath} is the system disk`);
    // ceph-volume's own refusal for a disk that still carries something.
    if (disk.hasFilesystem) throw new Error(`RuntimeError: Device ${devicePath} has a filesystem.`);
  }
  const osd = cluster.osdmap.osds.get(id);
  if (!osd || osd.uuid !== uuid) throw new Error(`osd.${id} with fsid ${uuid} is not in the OSD map: register it with \`osd new\` first`);
  if (label && label.osdId !== id) throw new Error(`the BlueStore label on ${devicePath} says osd.${label.osdId}, not osd.${id}`);
  if (osd.booted && (osd.host !== host || osd.devicePath !== devicePath)) {
    throw new Error(`osd.${id} already runs from ${osd.devicePath ?? '?'} on ${osd.host ?? '?'}`);
  }
  const sizeBytes = ctx.args.sizeBytes ?? disk.sizeBytes;
  const deviceClass: DeviceClass = ctx.args.deviceClass ?? classOf(disk);
  if (!label) {
    disk.bluestore = { fsid: cluster.fsid, osdUuid: uuid, osdId: id };
    // blkid now finds ceph_bluestore on it, as the agent's inventory reports.
    disk.hasFilesystem = true;
  }
  cluster.startOsd(id, host, sizeBytes, deviceClass, { ip: ctx.machine.ip, devicePath });
  ctx.log(
    'info',
    label
      ? `osd.${id}: BlueStore of ${uuid} found on ${devicePath}: adopted (no mkfs), started`
      : `osd.${id}: bluestore on ${devicePath} (${deviceClass}), started`,
  );
  return { osdId: id, host };
}

/** The verified wipe, as the agent does it: wipefs, both ends, every BlueStore
 * label offset the disk is large enough for, then a read-back. A signature that survives
 * (Lab.stickySignature) fails the step naming it, and the disk is not reported wiped. */
function verifiedWipe<A>(ctx: StepContext<A>, disk: SimDisk): void {
  const offsets = LABEL_OFFSETS.filter((o) => o < disk.sizeBytes).map((o) => `${o / GIB} GiB`);
  ctx.log('info', `wipefs --all ${disk.devicePath}; zeroed the first and last MiB, 16 MiB at 0 and the label at ${offsets.join(', ')}`);
  if (disk.stickySignature !== undefined) {
    throw new Error(`${disk.devicePath} is not clean after the wipe: the read-back found ${disk.stickySignature}`);
  }
  delete disk.bluestore;
  disk.hasFilesystem = false;
  ctx.log('info', `${disk.devicePath}: read back clean (blkid -p finds nothing, no BlueStore label)`);
}

const GIB = 1024 ** 3;
/** Where BlueStore releases keep label copies (besides offset 0). */
const LABEL_OFFSETS = [1, 10, 100, 1000].map((g) => g * GIB);

/** The disk no longer holds a purged or destroyed OSD's data: Ceph's map forgets the device. */
function forget(cluster: SimCephCluster, host: string, devicePath: string): void {
  const id = osdOn(cluster, host, devicePath);
  const o = id === undefined ? undefined : cluster.osdmap.osds.get(id);
  if (o && !o.up) delete o.devicePath;
}

const classOf = (d: SimDisk): DeviceClass => (d.interface === 'nvme' ? 'nvme' : d.rotational ? 'hdd' : 'ssd');

function diskAt(machine: MachineSpec, devicePath: string): SimDisk {
  const disk = machine.disks.find((d) => d.devicePath === devicePath && !d.dead);
  if (!disk) throw new Error(`no disk at ${devicePath} on this machine`);
  return disk;
}

/** The OSD (not purged) whose data lives on that device of that host. */
const osdOn = (cluster: SimCephCluster, host: string, devicePath: string): number | undefined =>
  [...cluster.osdmap.osds.values()].find((o) => o.host === host && o.devicePath === devicePath)?.id;
