// A node's maintenance on the real agent: every Ceph daemon of the node stopped cleanly, and
// later started again the way each was last started. The order is an operator's: what clients
// use and a standby can take over first (gateways, MDS, manager), then the OSDs (noout, set by
// the master before, keeps Ceph from moving their data), the monitor last, so the OSDs' "marking
// myself down" reaches a quorum this monitor is still part of. Starting goes the other way: the
// monitor first (its disk mounted first), then the manager and the OSDs, the MDS and gateways.
// What was stopped is written down on the node before each stop, so a start after a crash, a
// retry or a reboot in between starts exactly those again.
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Daemon, daemonOfEntity, type DaemonType } from '../../catalogue/index.js';
import { entityOf } from '../ceph-host.js';
import type { AgentStepContext, AgentStepOf } from './context.js';

/** The order daemons are stopped in; started in reverse. */
export const STOP_ORDER: readonly DaemonType[] = [Daemon.rgw, Daemon.nfs, Daemon.mds, Daemon.mgr, Daemon.osd, Daemon.mon];

const rank = (t: DaemonType): number => STOP_ORDER.indexOf(t);

/** Where the node keeps the daemons its maintenance stopped (entity names). */
const listFile = <A>(ctx: AgentStepContext<A>): string => join(ctx.host.opts.dataDir, 'maintenance-stopped.json');

async function readList<A>(ctx: AgentStepContext<A>): Promise<string[]> {
  const text = await readFile(listFile(ctx), 'utf8').catch(() => '[]');
  const parsed: unknown = JSON.parse(text);
  return Array.isArray(parsed) ? parsed.filter((x): x is string => typeof x === 'string') : [];
}

const sorted = (ds: Array<{ type: DaemonType; id: string }>) => [...ds].sort((a, b) => rank(a.type) - rank(b.type));

export const stopDaemons: AgentStepOf<'node.daemons-stop'> = async (ctx) => {
  const running = sorted(await ctx.host.daemons());
  // Written first: a crash halfway still knows what to start again (a retry adds to it).
  const list = [...new Set([...(await readList(ctx)), ...running.map((d) => entityOf(d.type, d.id))])];
  await ctx.host.writeSecret(listFile(ctx), JSON.stringify(list));
  for (const d of running) {
    const was = await ctx.host.stop(d.type, d.id);
    ctx.log('info', `${entityOf(d.type, d.id)}: ${was ? 'stopped' : 'was not running'}`);
  }
  if (running.length === 0) ctx.log('info', 'no Ceph daemon runs on this node');
  return { stopped: running.map((d) => entityOf(d.type, d.id)) };
};

export const startDaemons: AgentStepOf<'node.daemons-start'> = async (ctx) => {
  const known = (await readList(ctx)).flatMap((e) => {
    const d = daemonOfEntity(e);
    return d ? [d] : [];
  });
  const started: string[] = [];
  for (const d of sorted(known).reverse()) {
    const how = await ctx.host.resume(d.type, d.id, ctx.signal);
    ctx.log('info', `${entityOf(d.type, d.id)}: ${how === 'running' ? 'already running' : 'started'}`);
    started.push(entityOf(d.type, d.id));
  }
  if (known.length === 0) ctx.log('info', 'the maintenance stopped no daemon here: nothing to start');
  // Forgotten once every one runs: a failed start leaves the list for the retry.
  await rm(listFile(ctx), { force: true });
  return { started };
};
