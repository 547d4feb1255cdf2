// The Ceph daemons of this node: where their files live, and starting, stopping and finding
// them. Daemons fork themselves into the background (Ceph's own daemonize, no `-f`) and write a
// pid file, so they are children of no agent: an agent that restarts or dies leaves them running,
// and finds them again by their pid files. How each daemon was started is kept as a small "unit"
// file, so a restart can start it again the same way (a restart step knows only its name).
// The NFS gateway (nfs-ganesha) is one of them too, with its own command line: its config file,
// pid file and log are named on it, as ganesha has no Ceph-style conf of its own.
// A monitor's store is on its own disk (mon-disk.ts): mounted before the monitor starts, and
// a monitor whose disk is gone is not started.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DAEMONS,
  Daemon,
  DATA_DAEMON_TYPES,
  DISK_DAEMON_TYPE,
  NODE_DAEMON_TYPES,
  daemonOfEntity,
  type DaemonType,
  type DataDaemonType,
} from '../catalogue/index.js';
import { CommandError } from '../errors.js';
import type { DaemonReport } from '../fleet/types.js';
import type { Runner } from '../exec/runner.js';
import { alive as running } from '../exec/processes.js';
import { localConf, type CephPaths } from './ceph-conf.js';
import { MonDisks } from './mon-disk.js';

const LOG_TAIL_LINES = 5;

export type { DaemonType };

/** The Ceph entity name of a daemon: mon.a, osd.3, client.rgw.gw1. */
export const entityOf = (type: DaemonType, id: string): string => DAEMONS[type].entity(id);

/** A removed monitor's disk: unmounted, and erased unless it was gone. */
type Released = Awaited<ReturnType<MonDisks['release']>>;

interface Unit {
  cmd: string;
  args: string[];
}

export interface CephHostOptions extends CephPaths {
  runner: Runner;
  /** Deadline of a daemon's start (it returns once the daemon has forked and is up). */
  startTimeoutMs?: number;
  /** How long a daemon gets between SIGTERM and SIGKILL. */
  stopGraceMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /** "major:minor" of a block device, null when the path is none (unit tests fake disks). */
  blockDevice?: (path: string) => Promise<string | null>;
}

export class CephHost {
  readonly conf: string;
  /** The disks of this node's monitors, recorded next to their units. */
  readonly monDisks: MonDisks;

  constructor(readonly opts: CephHostOptions) {
    this.conf = join(opts.dataDir, 'ceph.conf');
    this.monDisks = new MonDisks({
      runner: opts.runner,
      recordDir: join(opts.dataDir, 'units'),
      ...(opts.blockDevice ? { blockDevice: opts.blockDevice } : {}),
    });
  }

  /** The daemon's data directory, as the local conf names it ($type_data = dir/type/ceph-$id). */
  dataDirOf(type: DataDaemonType, id: string): string {
    return join(this.opts.dataDir, type, `ceph-${id}`);
  }

  keyringOf(entity: string): string {
    return join(this.opts.dataDir, 'keyring', `ceph.${entity}.keyring`);
  }

  pidFileOf(type: DaemonType, id: string): string {
    return join(this.opts.runDir, `ceph-${entityOf(type, id)}.pid`);
  }

  /** nfs-ganesha's own config (its Ceph client reads this node's ceph.conf, named inside). */
  ganeshaConfOf(id: string): string {
    return join(this.dataDirOf(Daemon.nfs, id), 'ganesha.conf');
  }

  /** nfs-ganesha's own log; the Ceph client inside it logs to ceph-client.nfs.<id>.log. */
  ganeshaLogOf(id: string): string {
    return join(this.opts.logDir, `ganesha-${entityOf(Daemon.nfs, id)}.log`);
  }

  /** Writes the master's ceph.conf with this node's paths and addresses after it (renamed into
   * place: a daemon starting meanwhile reads the old file or the new one, never half of one),
   * and the SHA-256 of the master's part, to compare with GET /ceph/cluster/config/hash. */
  async writeConf(masterConf: string): Promise<void> {
    const dirs = [
      this.opts.runDir,
      this.opts.logDir,
      ...['keyring', 'crash', ...DATA_DAEMON_TYPES, 'radosgw'].map((d) => join(this.opts.dataDir, d)),
    ];
    await Promise.all(dirs.map((d) => mkdir(d, { recursive: true, mode: 0o750 })));
    // Steps run at once may write it together: each through its own temporary file.
    const tmp = `${this.conf}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(tmp, localConf(masterConf, this.opts), { mode: 0o644 });
    await rename(tmp, this.conf);
    await writeFile(this.masterHashFile, `${createHash('sha256').update(masterConf).digest('hex')}\n`);
  }

  /** The hash of the master's conf this node's ceph.conf was last written from; null when
   * the node never took part in the cluster. */
  async masterConfHash(): Promise<string | null> {
    return (await readFile(this.masterHashFile, 'utf8').catch(() => '')).trim() || null;
  }

  private get masterHashFile(): string {
    return `${this.conf}.sha256`;
  }

  /** A secret file, readable by root only. */
  async writeSecret(file: string, text: string): Promise<void> {
    await mkdir(join(file, '..'), { recursive: true, mode: 0o750 });
    await writeFile(file, text, { mode: 0o600 });
  }

  /** Starts the daemon unless it runs; `extra` are its own flags after `-c conf`. */
  async start(type: DaemonType, id: string, extra: string[] = [], signal?: AbortSignal): Promise<'started' | 'running'> {
    if (await this.pidOf(type, id)) return 'running';
    await this.mountDisk(type, id);
    const unit: Unit = { cmd: DAEMONS[type].binary, args: [...this.argsOf(type, id), ...extra] };
    await this.writeSecret(this.unitFile(type, id), JSON.stringify(unit));
    await this.launch(type, id, unit, signal);
    return 'started';
  }

  /** Stops (if running) and starts again the way it was last started. */
  async restart(type: DaemonType, id: string, signal?: AbortSignal): Promise<void> {
    const unit = await this.unit(type, id);
    if (!unit) throw new Error(`${entityOf(type, id)} was never started on this node`);
    // Before it is stopped: a monitor whose disk is gone is left as it is.
    await this.mountDisk(type, id);
    await this.stop(type, id);
    await this.launch(type, id, unit, signal);
  }

  /** Starts it again the way it was last started unless it runs (maintenance's start): a
   * monitor's disk mounted first, as on the agent's start-up. */
  async resume(type: DaemonType, id: string, signal?: AbortSignal): Promise<'started' | 'running'> {
    if (await this.pidOf(type, id)) return 'running';
    const unit = await this.unit(type, id);
    if (!unit) throw new Error(`${entityOf(type, id)} was never started on this node`);
    await this.mountDisk(type, id);
    await this.launch(type, id, unit, signal);
    return 'started';
  }

  /** SIGTERM, then SIGKILL after the grace period; true when it was running. */
  async stop(type: DaemonType, id: string): Promise<boolean> {
    const pid = await this.pidOf(type, id);
    if (!pid) return false;
    signal(pid, 'SIGTERM');
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    const deadline = Date.now() + (this.opts.stopGraceMs ?? 15_000);
    while (running(pid) && Date.now() < deadline) await sleep(100);
    if (running(pid)) signal(pid, 'SIGKILL');
    while (running(pid)) await sleep(50);
    await rm(this.pidFileOf(type, id), { force: true });
    return true;
  }

  /** Forgets a daemon: its unit file and its data directory (the daemon must be stopped). A
   * monitor's store is deleted from its disk, which is then unmounted, erased and forgotten (a
   * disk that is gone is forgotten too: removing the monitor is the way out). */
  async remove(type: DataDaemonType, id: string): Promise<Released> {
    await rm(this.unitFile(type, id), { force: true });
    const dir = this.dataDirOf(type, id);
    let released: Released = null;
    if (type === Daemon.mon && (await this.monDisks.recorded(id))) {
      for (const e of await readdir(dir).catch(() => [] as string[])) await rm(join(dir, e), { recursive: true, force: true });
      released = await this.monDisks.release(id, dir);
      await rmdir(dir).catch(() => undefined);
    }
    await rm(dir, { recursive: true, force: true });
    return released;
  }

  /** A monitor's disk mounted at its data dir if it is not (a daemon without a disk: nothing). */
  async mountDisk(type: DaemonType, id: string, log?: (message: string) => void): Promise<void> {
    if (type === Daemon.mon) await this.monDisks.mount(id, this.dataDirOf(type, id), log);
  }

  /** The agent's start-up: every monitor's disk mounted, as a boot leaves them unmounted. A
   * disk that is gone is said, not fatal: the monitor's start fails the same way, later. */
  async mountDisks(log: (level: 'info' | 'error', message: string) => void): Promise<void> {
    for (const name of await this.monDisks.names())
      await this.mountDisk(Daemon.mon, name, (m) => log('info', m)).catch((err: unknown) =>
        log('error', err instanceof Error ? err.message : String(err)),
      );
  }

  /** The pid of the running daemon, or null: a pid file whose process is gone, or is some
   * other program now (pid reuse), does not count. Nor does `--mkfs`: it writes the daemon's
   * pid file for the seconds it runs, and a daemon reported running and then gone would be
   * "restarted" in the middle of its creation. */
  async pidOf(type: DaemonType, id: string): Promise<number | null> {
    const text = await readFile(this.pidFileOf(type, id), 'utf8').catch(() => '');
    const pid = Number(text.trim());
    if (!Number.isInteger(pid) || pid <= 0 || !running(pid)) return null;
    const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    return args.includes(type === Daemon.nfs ? this.ganeshaConfOf(id) : this.conf) && !args.includes('--mkfs') ? pid : null;
  }

  /** The daemons running here, found by their pid files. */
  async daemons(): Promise<Array<{ type: DaemonType; id: string }>> {
    const out: Array<{ type: DaemonType; id: string }> = [];
    for (const f of await readdir(this.opts.runDir).catch(() => [] as string[])) {
      const d = daemonOfEntity(/^ceph-(.+)\.pid$/.exec(f)?.[1] ?? '');
      if (d && (await this.pidOf(d.type, d.id))) out.push(d);
    }
    return out;
  }

  /** Which daemons run here: the agent's report. */
  async report(): Promise<DaemonReport> {
    const out = { ...Object.fromEntries(NODE_DAEMON_TYPES.map((t) => [t, false])), osds: [] } as unknown as DaemonReport;
    for (const { type, id } of await this.daemons()) {
      if (type === DISK_DAEMON_TYPE) out.osds.push(Number(id));
      else out[type] = true;
    }
    out.osds.sort((a, b) => a - b);
    return out;
  }

  /** How the daemon is named on its command line: Ceph's take the conf and their id; nfs-ganesha
   * its config, pid file and log (the pid file where pidOf looks, as for the others). */
  private argsOf(type: DaemonType, id: string): string[] {
    if (type === Daemon.nfs)
      return ['-f', this.ganeshaConfOf(id), '-p', this.pidFileOf(type, id), '-L', this.ganeshaLogOf(id), '-N', 'NIV_EVENT'];
    return ['-c', this.conf, ...(DAEMONS[type].byEntity ? ['-n', entityOf(type, id)] : ['-i', id])];
  }

  private unitFile(type: DaemonType, id: string): string {
    return join(this.opts.dataDir, 'units', `${entityOf(type, id)}.json`);
  }

  private async unit(type: DaemonType, id: string): Promise<Unit | null> {
    const text = await readFile(this.unitFile(type, id), 'utf8').catch(() => null);
    return text ? (JSON.parse(text) as Unit) : null;
  }

  /** Ceph's daemonize: the command returns once the forked daemon is initialised. (nfs-ganesha's
   * returns at once, before its exports exist: its start step waits for them.) */
  private async launch(type: DaemonType, id: string, unit: Unit, signal?: AbortSignal): Promise<void> {
    await this.explained(entityOf(type, id), () =>
      this.opts.runner.run(unit.cmd, unit.args, { timeoutMs: this.opts.startTimeoutMs ?? 120_000, ...(signal ? { signal } : {}) }),
    );
  }

  /** Ceph daemons and their mkfs say why they failed in their log file, not on stderr: a
   * failure without stderr gets the log's last lines, so the run's error says what happened. */
  async explained<T>(entity: string, body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (err) {
      if (!(err instanceof CommandError) || err.stderr.trim() !== '') throw err;
      const log = await readFile(join(this.opts.logDir, `ceph-${entity}.log`), 'utf8').catch(() => '');
      const tail = log.trim().split('\n').slice(-LOG_TAIL_LINES).join('\n');
      if (tail) err.message = `${err.message}; its log ends with:\n${tail}`;
      throw err;
    }
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone already
  }
}
