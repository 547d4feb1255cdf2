// Managers, metadata servers and gateways: each runs with the key the master made for it
// (`ceph auth get-or-create`), fetched over the agent's session into a 0600 file; and the
// restart of any daemon of this node, the way it was last started.
import { int, optInt, optStr, str } from '../../fleet/step-args.js';
import { keyringFor } from '../master.js';
import type { DaemonType } from '../ceph-host.js';
import { join } from 'node:path';
import type { AgentStep, AgentStepContext } from './context.js';
import { refreshConf } from './context.js';

/** ceph-mgr / ceph-mds: the key in the daemon's data dir, where Ceph looks for it. */
const dataDaemon = (type: 'mgr' | 'mds'): AgentStep => async (ctx) => {
  const name = str(ctx.args, 'name');
  checkFsid(ctx, await refreshConf(ctx));
  const entity = `${type}.${name}`;
  await ctx.host.writeSecret(join(ctx.host.dataDirOf(type, name), 'keyring'), await keyringFor(ctx.master, entity));
  const how = await ctx.host.start(type, name, [], ctx.signal);
  ctx.log('info', `${entity}: ${how === 'running' ? 'already running' : 'started'}`);
  return { name };
};

export const startMgr = dataDaemon('mgr');
export const startMds = dataDaemon('mds');

/** radosgw: S3 (beast) on this node's address and the given port. */
export const startRgw: AgentStep = async (ctx) => {
  const [name, port] = [str(ctx.args, 'name'), int(ctx.args, 'port')];
  await refreshConf(ctx);
  const entity = `client.rgw.${name}`;
  await ctx.host.writeSecret(ctx.host.keyringOf(entity), await keyringFor(ctx.master, entity));
  const endpoint = `${ctx.host.opts.publicAddr ?? '0.0.0.0'}:${port}`;
  const how = await ctx.host.start('rgw', name, ['--rgw-frontends', `beast endpoint=${endpoint}`, '--rgw-thread-pool-size', '64'], ctx.signal);
  ctx.log('info', `${entity}: ${how === 'running' ? 'already running' : `started, S3 on ${endpoint}`}`);
  return { name, endpoint };
};

/** Like `systemctl stop`: stopping a gateway that does not run succeeds. */
export const stopRgw: AgentStep = async (ctx) => {
  const name = str(ctx.args, 'name');
  const stopped = await ctx.host.stop('rgw', name);
  ctx.log('info', `client.rgw.${name}: ${stopped ? 'stopped' : 'was not running'}`);
  return { name };
};

const TYPES: readonly string[] = ['mon', 'mgr', 'mds', 'rgw', 'osd'];

export const restartDaemon: AgentStep = async (ctx) => {
  const type = str(ctx.args, 'daemon');
  if (!TYPES.includes(type)) throw new Error(`unknown daemon type '${type}'`);
  const id = type === 'osd' ? String(optInt(ctx.args, 'id') ?? str(ctx.args, 'name').replace(/^osd\./, '')) : str(ctx.args, 'name');
  await refreshConf(ctx);
  await ctx.host.restart(type as DaemonType, id, ctx.signal);
  ctx.log('info', `${type}.${id}: restarted`);
  return { daemon: type, name: id };
};

/** A daemon of another cluster must not start with this node's conf. */
export function checkFsid(ctx: AgentStepContext, conf: string): void {
  const fsid = optStr(ctx.args, 'fsid');
  const have = /^fsid\s*=\s*(\S+)/m.exec(conf)?.[1];
  if (fsid && have && fsid !== have) throw new Error(`the step is for cluster ${fsid}, the master's ceph.conf is for ${have}`);
}
