// The NFS gateway of a node: nfs-ganesha exporting a CephFS over NFSv4 through its Ceph FSAL,
// with the gateway's own cephx key (client.nfs.<name>) fetched from the master like every
// daemon's. What was measured on Ceph 16 / ganesha 4.3, and why the config is what it is:
// docs/real-components.md, "NFS gateway (nfs-ganesha, FSAL CEPH)".
//
// Arguments (to become the JSON Schemas of the catalogue's node steps):
//   startNfs  { name: string     the gateway's id, the node's hostname: cephx user client.nfs.<name>
//                                 (plain name: letters, digits, '_', '.', '-'; at most 63)
//               fsid?: string    the cluster the run is for; refused if the master's conf is another's
//               export: string   the CephFS filesystem exported (plain name, as above)
//               path?: string    its directory exported, absolute, plain segments; default '/'
//               port?: integer   NFS TCP port, 1-65535; default 2049 }
//             → { name, export, path, pseudo: '/<export>', endpoint: '<addr>:<port>' }
//   stopNfs   { name: string }   → { name }
// The key the master makes for it (least privilege, what `ceph fs authorize <fs> client.nfs.<name>
// <path> rw` gives): mon 'allow r fsname=<fs>', mds 'allow rw fsname=<fs>' (with path=<path>
// when not '/'), osd 'allow rw tag cephfs data=<fs>'.
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DAEMONS, Daemon } from '../../catalogue/index.js';
import { entityOf } from '../ceph-host.js';
import { ganeshaConf, checkExport, pseudoOf, type GaneshaExport } from '../ganesha-conf.js';
import { keyringFor } from '../master.js';
import type { AgentStepContext, AgentStepOf } from './context.js';
import { refreshConf } from './context.js';
import { checkFsid } from './daemons.js';

export const NFS_DEFAULT_PORT = DAEMONS.nfs.startArgs.port;
/** ganesha's parent returns before its exports exist: this long for the line saying they do. */
const READY_TIMEOUT_MS = 60_000;
/** A pid file still missing this long after the start: the daemon died early. */
const PID_GRACE_MS = 5_000;
const LOG_TAIL_LINES = 8;

/** Starts the node's gateway, or leaves it running when its config is unchanged; a changed
 * export (another filesystem, path or port) restarts it with the new config. */
export const startNfs: AgentStepOf<'ceph.nfs.start'> = async (ctx) => {
  const name = ctx.args.name;
  const wanted = exportOf(ctx, name);
  checkExport(wanted); // before anything is fetched or written
  checkFsid(ctx.args.fsid, await refreshConf(ctx));
  const entity = entityOf(Daemon.nfs, name);
  const host = ctx.host;
  await host.writeSecret(host.keyringOf(entity), await keyringFor(ctx.master, entity));
  await mkdir(wanted.recoveryRoot, { recursive: true, mode: 0o750 });
  const text = ganeshaConf(wanted);
  const file = host.ganeshaConfOf(name);
  const endpoint = `${host.opts.publicAddr ?? '0.0.0.0'}:${wanted.port}`;
  const result = { name, export: wanted.fs, path: wanted.path, pseudo: pseudoOf(wanted.fs), endpoint };
  const current = await readFile(file, 'utf8').catch(() => null);
  if (await host.pidOf(Daemon.nfs, name)) {
    if (current === text) {
      ctx.log('info', `${entity}: already running`);
      return result;
    }
    ctx.log('info', `${entity}: its export changed, restarting it`);
    await host.stop(Daemon.nfs, name);
  }
  await writeFile(file, text, { mode: 0o644 });
  const log = host.ganeshaLogOf(name);
  const from = (await stat(log).catch(() => null))?.size ?? 0;
  await host.start(Daemon.nfs, name, [], ctx.signal);
  await waitReady(ctx, name, log, from);
  ctx.log('info', `${entity}: started, NFSv4 on ${endpoint}, ${pseudoOf(wanted.fs)} is ${wanted.fs}:${wanted.path}`);
  return result;
};

/** Like `systemctl stop`: stopping a gateway that does not run succeeds. Its config and client
 * records stay, for a start again on this node. */
export const stopNfs: AgentStepOf<'ceph.nfs.stop'> = async (ctx) => {
  const name = ctx.args.name;
  const stopped = await ctx.host.stop(Daemon.nfs, name);
  ctx.log('info', `${entityOf(Daemon.nfs, name)}: ${stopped ? 'stopped' : 'was not running'}`);
  return { name };
};

function exportOf(ctx: AgentStepContext<{ export: string; path?: string; port?: number }>, name: string): GaneshaExport {
  const host = ctx.host;
  return {
    name,
    fs: ctx.args.export,
    path: ctx.args.path ?? '/',
    port: ctx.args.port ?? NFS_DEFAULT_PORT,
    bindAddr: host.opts.publicAddr ?? '0.0.0.0',
    cephConf: host.conf,
    recoveryRoot: join(host.dataDirOf(Daemon.nfs, name), 'recovery'),
  };
}

/** Until ganesha says it serves. A gateway whose export failed (a wrong key, a filesystem that
 * does not exist) still runs and serves nothing: that is a failed start, and it is stopped. */
async function waitReady(ctx: AgentStepContext, name: string, log: string, from: number): Promise<void> {
  const host = ctx.host;
  const sleep = host.opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const started = Date.now();
  const entity = entityOf(Daemon.nfs, name);
  for (;;) {
    const text = await readFrom(log, from);
    const pid = await host.pidOf(Daemon.nfs, name);
    if (pid && /NFS SERVER INITIALIZED/.test(text)) {
      const failed = text.split('\n').filter((l) => /Could not create export|create_export|Unable to init Ceph/.test(l));
      if (failed.length === 0) return;
      await host.stop(Daemon.nfs, name);
      throw new Error(`${entity}: ganesha started without its export, stopped it; its log says:\n${failed.map(trim).join('\n')}`);
    }
    const waited = Date.now() - started;
    if (!pid && (waited > PID_GRACE_MS || /:FATAL :|Server exiting/.test(text)))
      throw new Error(`${entity}: ganesha exited during its start${tail(text)}`);
    if (waited > READY_TIMEOUT_MS) {
      await host.stop(Daemon.nfs, name);
      throw new Error(`${entity}: ganesha did not serve within ${READY_TIMEOUT_MS / 1000} s, stopped it${tail(text)}`);
    }
    if (ctx.signal.aborted) throw new Error(`${entity}: the run was aborted during ganesha's start`);
    await sleep(100);
  }
}

async function readFrom(file: string, from: number): Promise<string> {
  const buf = await readFile(file).catch(() => Buffer.alloc(0));
  return buf.subarray(Math.min(from, buf.length)).toString('utf8');
}

/** ganesha's lines begin with a date, host and thread: the message is after the component. */
const trim = (line: string): string => line.replace(/^.*?\] /, '').slice(0, 300);

function tail(text: string): string {
  const lines = text
    .trim()
    .split('\n')
    .filter((l) => l && !/:DBUS :/.test(l))
    .slice(-LOG_TAIL_LINES);
  return lines.length ? `; its log ends with:\n${lines.map(trim).join('\n')}` : '';
}
