// Managers, metadata servers and gateways: each runs with the key the master made for it
// (`ceph auth get-or-create`), fetched over the agent's session into a 0600 file; and the
// restart of any daemon of this node, the way it was last started.
import { DAEMONS, DISK_DAEMON_TYPE, Daemon, type DataDaemonType, type KeyedDaemonType } from '../../catalogue/index.js';
import { keyringFor } from '../master.js';
import { join } from 'node:path';
import type { AgentStepOf } from './context.js';
import { refreshConf } from './context.js';

/** ceph-mgr / ceph-mds: the key in the daemon's data dir, where Ceph looks for it. */
const dataDaemon =
  (type: Extract<DataDaemonType, KeyedDaemonType>): AgentStepOf<'ceph.mgr.start'> =>
  async (ctx) => {
    const name = ctx.args.name;
    checkFsid(ctx.args.fsid, await refreshConf(ctx));
    const entity = DAEMONS[type].entity(name);
    await ctx.host.writeSecret(join(ctx.host.dataDirOf(type, name), 'keyring'), await keyringFor(ctx.master, entity));
    const how = await ctx.host.start(type, name, [], ctx.signal);
    ctx.log('info', `${entity}: ${how === 'running' ? 'already running' : 'started'}`);
    return { name };
  };

export const startMgr: AgentStepOf<'ceph.mgr.start'> = dataDaemon(Daemon.mgr);
// The same arguments as the manager's (one schema, two names): compared once, not expanded.
export const startMds = dataDaemon(Daemon.mds) as unknown as AgentStepOf<'ceph.mds.start'>;

/** radosgw: S3 (beast) on this node's address and the given port. */
export const startRgw: AgentStepOf<'ceph.rgw.start'> = async (ctx) => {
  const { name, port } = ctx.args;
  await refreshConf(ctx);
  const entity = DAEMONS.rgw.entity(name);
  await ctx.host.writeSecret(ctx.host.keyringOf(entity), await keyringFor(ctx.master, entity));
  const endpoint = `${ctx.host.opts.publicAddr ?? '0.0.0.0'}:${port}`;
  const how = await ctx.host.start(
    Daemon.rgw,
    name,
    ['--rgw-frontends', `beast endpoint=${endpoint}`, '--rgw-thread-pool-size', '64'],
    ctx.signal,
  );
  ctx.log('info', `${entity}: ${how === 'running' ? 'already running' : `started, S3 on ${endpoint}`}`);
  return { name, endpoint };
};

/** Like `systemctl stop`: stopping a gateway that does not run succeeds. */
export const stopRgw: AgentStepOf<'ceph.rgw.stop'> = async (ctx) => {
  const name = ctx.args.name;
  const stopped = await ctx.host.stop(Daemon.rgw, name);
  ctx.log('info', `${DAEMONS.rgw.entity(name)}: ${stopped ? 'stopped' : 'was not running'}`);
  return { name };
};

/** Like `systemctl stop`: a manager or MDS no longer desired; one that does not run succeeds. */
export const stopMgr: AgentStepOf<'ceph.mgr.stop'> = async (ctx) => {
  const stopped = await ctx.host.stop(Daemon.mgr, ctx.args.name);
  ctx.log('info', `${DAEMONS.mgr.entity(ctx.args.name)}: ${stopped ? 'stopped' : 'was not running'}`);
  return { name: ctx.args.name };
};

export const stopMds: AgentStepOf<'ceph.mds.stop'> = async (ctx) => {
  const stopped = await ctx.host.stop(Daemon.mds, ctx.args.name);
  ctx.log('info', `${DAEMONS.mds.entity(ctx.args.name)}: ${stopped ? 'stopped' : 'was not running'}`);
  return { name: ctx.args.name };
};

export const restartDaemon: AgentStepOf<'ceph.daemon.restart'> = async (ctx) => {
  const type = ctx.args.daemon;
  const id =
    type === DISK_DAEMON_TYPE
      ? String(ctx.args.id ?? required(ctx.args.name, 'name').replace(/^osd\./, ''))
      : required(ctx.args.name, 'name');
  await refreshConf(ctx);
  await ctx.host.restart(type, id, ctx.signal);
  ctx.log('info', `${type}.${id}: restarted`);
  return { daemon: type, name: id };
};

/** A config change's rolling restart on this node: the master's ceph.conf written once, then
 * each daemon restarted in turn (systemctl restart), so each starts with the new config. */
export const restartForConfig: AgentStepOf<'ceph.config.restart'> = async (ctx) => {
  await refreshConf(ctx);
  const restarted: string[] = [];
  for (const d of ctx.args.daemons) {
    await ctx.host.restart(d.daemon, d.name, ctx.signal);
    restarted.push(`${d.daemon}.${d.name}`);
    ctx.log('info', `${d.daemon}.${d.name}: restarted for config ${ctx.args.config}`);
  }
  return { restarted };
};

/** A daemon of another cluster must not start with this node's conf. */
export function checkFsid(fsid: string | undefined, conf: string): void {
  const have = /^fsid\s*=\s*(\S+)/m.exec(conf)?.[1];
  if (fsid && have && fsid !== have) throw new Error(`the step is for cluster ${fsid}, the master's ceph.conf is for ${have}`);
}

/** An argument the schema leaves optional but this use needs. */
function required<T>(v: T | undefined, key: string): T {
  if (v === undefined) throw new Error(`argument ${key} is required`);
  return v;
}
