// Monitors. The first ones create the cluster: a first monmap naming each of them, a mon keyring
// with the mon. key the master made, `ceph-mon --mkfs`, start; they form a quorum once a
// majority runs. Later ones take the master's current monmap and the mon. key, mkfs, and start:
// a monitor that is not in the map yet asks the quorum to add it. A monitor store that exists
// already is not made again, so a retried step only starts what is not running.
// The store is made on the monitor's own disk (the step's devicePath), which gets a filesystem
// and is mounted at the data dir first (../mon-disk.ts); the removal unmounts it.
// Only mon.: mkfs imports every key of its keyring, and a node never holds client.admin (unless
// its spec makes it an admin node); the master imports client.admin itself once the first
// monitors run (reconcilers/mon/admin-key.ts). No step of the agent needs client.admin.
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { monAddrVec } from '../../render/ceph-conf.js';
import { Daemon } from '../../catalogue/index.js';
import type { AgentStepContext, AgentStepOf } from './context.js';
import { refreshConf, tool } from './context.js';

/** The keys of a monitor's mkfs keyring: the monitors' shared key, nothing else. */
export const MON_KEYS = ['mon.'];

export const bootstrapMon: AgentStepOf<'ceph.mon.bootstrap'> = async (ctx) => {
  const { fsid, monName: name, addr } = ctx.args;
  // The lab's monitors take a default port; a real first monitor is told its port.
  const port = ctx.args.monPort;
  if (port === undefined) throw new Error('argument monPort is required');
  await refreshConf(ctx);
  const addrv = monAddrVec(addr, port);
  const members = ctx.args.initialMembers?.map((m) => ({ name: m.name, addr: m.addr })) ?? [{ name, addr }];
  if (!members.some((m) => m.name === name))
    throw new Error(`mon.${name} is not one of the first monitors (${members.map((m) => m.name).join(', ')})`);
  // The master's conf names the monitors it knows of in mon_initial_members. A new monitor
  // store takes names it does not find in the monmap as 0.0.0.0 placeholders, and would then
  // wait forever for a majority that can never form. The initial members are exactly the
  // monmap's, given on the command line over the conf.
  const initial = ['--mon-initial-members', members.map((m) => m.name).join(',')];
  await prepareDisk(ctx, name, ctx.args.devicePath);
  await withMkfsFiles(ctx, async (dir) => {
    const monmap = join(dir, 'monmap');
    const addv = members.flatMap((m) => ['--addv', m.name, monAddrVec(m.addr, port)]);
    await tool(ctx, 'monmaptool', [
      '--create',
      '--fsid',
      fsid,
      ...addv,
      '--set-min-mon-release',
      'pacific',
      '--enable-all-features',
      monmap,
    ]);
    await mkfs(ctx, name, monmap, dir, MON_KEYS, initial);
  });
  await startMon(ctx, name, addrv, initial);
  return { fsid, monName: name, addr: addrv, initialMembers: members.map((m) => m.name) };
};

export const joinMon: AgentStepOf<'ceph.mon.join'> = async (ctx) => {
  const { monName: name, addr } = ctx.args;
  const addrv = monAddrVec(addr, ctx.args.monPort ?? 3300);
  await refreshConf(ctx);
  await prepareDisk(ctx, name, ctx.args.devicePath);
  await withMkfsFiles(ctx, async (dir) => {
    const monmap = join(dir, 'monmap');
    await writeFile(monmap, await ctx.master.monmap(), { mode: 0o600 });
    await mkfs(ctx, name, monmap, dir, MON_KEYS);
  });
  await startMon(ctx, name, addrv);
  return { monName: name, addr: addrv };
};

/** Stops the monitor and deletes its store; taking it out of the monmap is the master's step. */
export const removeMon: AgentStepOf<'ceph.mon.remove'> = async (ctx) => {
  const name = ctx.args.monName;
  const stopped = await ctx.host.stop(Daemon.mon, name);
  const disk = await ctx.host.remove(Daemon.mon, name);
  const erased = disk?.erased === true ? ' and erased' : disk?.erased === false ? ' (it is gone)' : ` (not erased: ${disk?.erased})`;
  const released = disk ? `; its disk ${disk.rec.device} is unmounted${erased}` : '';
  ctx.log('info', `mon.${name}: ${stopped ? 'stopped' : 'was not running'}; its store is removed${released}`);
  return { monName: name };
};

/** The monitor's disk, with our filesystem, mounted at its data dir before its mkfs. */
async function prepareDisk<A>(ctx: AgentStepContext<A>, name: string, device: string | undefined): Promise<void> {
  await ctx.host.monDisks.prepare(name, device ?? '', ctx.host.dataDirOf(Daemon.mon, name), (m) => ctx.log('info', m));
}

async function mkfs<A>(
  ctx: AgentStepContext<A>,
  name: string,
  monmap: string,
  dir: string,
  entities: string[],
  extra: string[] = [],
): Promise<void> {
  const data = ctx.host.dataDirOf(Daemon.mon, name);
  if (await exists(join(data, 'kv_backend'))) {
    ctx.log('info', `mon.${name}: its store exists already; not made again`);
    return;
  }
  const keyrings = await ctx.master.keyrings();
  const text = entities.map((e) => {
    const k = keyrings.find((x) => x.entity === e);
    if (!k) throw new Error(`the master holds no ${e} key for this monitor`);
    return k.keyring;
  });
  const keyring = join(dir, 'mon.keyring');
  await ctx.host.writeSecret(keyring, text.join(''));
  await ctx.host.explained(`mon.${name}`, () =>
    tool(ctx, 'ceph-mon', ['-c', ctx.host.conf, '--mkfs', '-i', name, '--monmap', monmap, '--keyring', keyring, ...extra]),
  );
  ctx.log('info', `mon.${name}: store made in ${data}`);
}

async function startMon<A>(ctx: AgentStepContext<A>, name: string, addrv: string, extra: string[] = []): Promise<void> {
  const how = await ctx.host.start(Daemon.mon, name, ['--public-addrv', addrv, ...extra], ctx.signal);
  ctx.log('info', `mon.${name}: ${how === 'running' ? 'already running' : `started on ${addrv}`}`);
}

/** A private directory for the mkfs inputs (the keyring holds secrets), removed afterwards. */
async function withMkfsFiles<A>(ctx: AgentStepContext<A>, body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(ctx.host.opts.runDir, 'mkfs-'));
  try {
    await body(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const exists = (p: string): Promise<boolean> =>
  access(p).then(
    () => true,
    () => false,
  );
