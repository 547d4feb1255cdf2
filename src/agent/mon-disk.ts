// A monitor's store on the disk chosen for it (docs/real-components.md, "Monitor disk"). The
// disk gets an ext4 filesystem labelled quarry-mon (e2fsprogs is in every Debian install;
// xfsprogs is not), mounted at the monitor's data dir before `ceph-mon --mkfs` makes the store
// in it. The disk (its path and its filesystem's UUID) is recorded next to the monitor's unit,
// so that every later start, restart and the agent's own start-up mount it first. A monitor
// whose disk is gone is not started: on the bare data dir it would have no store, and a later
// mkfs there would quietly move the monitor onto the system disk. It fails, naming the disk,
// and stays reported not running.
import { mkdir, readdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CommandError } from '../errors.js';
import type { Runner } from '../exec/runner.js';

/** The label of the filesystem Quarry makes on a monitor's disk: a disk with it is ours. */
export const MON_FS_LABEL = 'quarry-mon';
export const MON_FS_TYPE = 'ext4';
const TIMEOUT_MS = 60_000;
/** mkfs.ext4 of a large disk writes its inode tables lazily, yet takes a moment. */
const MKFS_TIMEOUT_MS = 300_000;

/** What a monitor's disk is remembered by. */
export interface MonDiskRecord {
  device: string;
  uuid: string;
  fsType: string;
}

/** What `blkid -p` finds on a device; empty when it finds nothing. */
export interface Signature {
  type?: string;
  uuid?: string;
  label?: string;
  ptType?: string;
}

export interface MonDisksOptions {
  runner: Runner;
  /** Where the records are kept (the units dir of the data dir). */
  recordDir: string;
  /** "major:minor" of a block device; null when the path is not one (unit tests fake it). */
  blockDevice?: (path: string) => Promise<string | null>;
}

type Log = (message: string) => void;

/** The start of a monitor whose disk is not there. */
export class MonDiskGoneError extends Error {
  constructor(name: string, rec: MonDiskRecord) {
    super(
      `the monitor's disk ${rec.device} (uuid ${rec.uuid}) is gone: mon.${name} is not started on an empty directory ` +
        '(put the disk back, or remove the monitor and create it on another disk)',
    );
  }
}

export class MonDisks {
  private readonly blockDevice: (path: string) => Promise<string | null>;

  constructor(private readonly o: MonDisksOptions) {
    this.blockDevice = o.blockDevice ?? majMinOf;
  }

  recordFile(name: string): string {
    return join(this.o.recordDir, `mon.${name}.disk.json`);
  }

  async recorded(name: string): Promise<MonDiskRecord | null> {
    const text = await readFile(this.recordFile(name), 'utf8').catch(() => null);
    return text ? (JSON.parse(text) as MonDiskRecord) : null;
  }

  /** The monitors whose disks are recorded on this node. */
  async names(): Promise<string[]> {
    const files = await readdir(this.o.recordDir).catch(() => [] as string[]);
    return files.flatMap((f) => /^mon\.(.+)\.disk\.json$/.exec(f)?.[1] ?? []);
  }

  /** Before a monitor's mkfs (bootstrap, join): the disk holds our filesystem (made if the
   * disk is blank; a foreign filesystem, a partition table or an OSD is refused, naming it)
   * and is mounted at `dir`. A retry finds it made and mounted and does nothing again. */
  async prepare(name: string, device: string, dir: string, log: Log): Promise<MonDiskRecord> {
    if (!device) throw new Error(`mon.${name}: no disk was given for its store (the node has not reported the monitor's disk)`);
    const rec = await this.recorded(name);
    if (rec) {
      const mounted = await this.mount(name, dir, log);
      if (!mounted) throw new Error(`mon.${name}: its disk record went away meanwhile`);
      const want = await this.blockDevice(device);
      if (want !== mounted.majMin)
        throw new Error(
          `mon.${name}'s store is on ${mounted.rec.device} (uuid ${rec.uuid}), not on ${device}: remove the monitor to move it`,
        );
      return mounted.rec;
    }
    const majMin = await this.blockDevice(device);
    if (!majMin) throw new Error(`no disk at ${device} on this node`);
    const at = await this.mountedAt(dir);
    if (at && at.majMin !== majMin) throw new Error(`${dir} has ${at.source} mounted, not ${device}`);
    if (!at) {
      const elsewhere = await this.mountsOf(device);
      if (elsewhere.length) throw new Error(`${device} is mounted at ${elsewhere.join(', ')}: not taken for mon.${name}`);
    }
    let sig = await this.probe(device);
    let made = false;
    if (isBlank(sig)) {
      await this.run('mkfs.ext4', ['-F', '-q', '-L', MON_FS_LABEL, '-m', '0', device], MKFS_TIMEOUT_MS);
      sig = await this.probe(device);
      made = true;
      log(`mon.${name}: ${MON_FS_TYPE} made on ${device} (uuid ${sig.uuid ?? '?'})`);
    } else if (!isOurs(sig)) {
      throw new Error(`${device} ${foreign(sig)}: not taken for mon.${name}'s store; wipe the disk first if it may be erased`);
    }
    if (!sig.uuid) throw new Error(`${device}: blkid finds no filesystem UUID after mkfs`);
    // Recorded before it is mounted: whatever happens next, a retry or a start knows the disk.
    const record: MonDiskRecord = { device, uuid: sig.uuid, fsType: MON_FS_TYPE };
    await this.save(name, record);
    if (!at) await this.mountOn(device, dir);
    const entries = (await readdir(dir)).filter((e) => e !== 'lost+found');
    if (!made && !at && entries.length > 0) {
      // Our label but no record of it on this node: a store (or files) from elsewhere.
      await this.unmount(dir);
      await rm(this.recordFile(name), { force: true });
      throw new Error(`${device} holds files this node did not put there (${entries.slice(0, 5).join(', ')}): wipe the disk first`);
    }
    // ceph-mon --mkfs takes a data dir holding anything else than its own files for a
    // monitor made already, and exits 0 without making one: ext4's lost+found must go
    // (e2fsck makes it again when it needs it).
    if (entries.length === 0) await rmdir(join(dir, 'lost+found')).catch(() => undefined);
    log(`mon.${name}: ${device} mounted at ${dir}${made ? '' : ` (its ${MON_FS_TYPE} was there already)`}`);
    return record;
  }

  /** Before a monitor starts: its recorded disk is mounted at `dir` (mounted now if it was
   * not). Found by its UUID if the device's name changed; gone (no device with that UUID):
   * MonDiskGoneError. A monitor without a record keeps its store in the data dir, as before
   * monitors had disks: nothing to do. */
  async mount(name: string, dir: string, log?: Log): Promise<{ rec: MonDiskRecord; majMin: string | null } | null> {
    const rec = await this.recorded(name);
    if (!rec) return null;
    const at = await this.mountedAt(dir);
    if (at) {
      if ((await this.probe(at.source)).uuid !== rec.uuid)
        throw new Error(`${dir} has ${at.source} mounted, not mon.${name}'s disk ${rec.device} (uuid ${rec.uuid})`);
      return { rec, majMin: at.majMin };
    }
    let current = rec;
    const here = (await this.blockDevice(rec.device)) ? await this.probe(rec.device) : {};
    if (here.uuid !== rec.uuid) {
      const found = await this.findByUuid(rec.uuid);
      if (!found) throw new MonDiskGoneError(name, rec);
      current = { ...rec, device: found };
      await this.save(name, current);
      log?.(`mon.${name}: its disk ${rec.device} is now ${found} (uuid ${rec.uuid})`);
    }
    const entries = await readdir(dir).catch(() => [] as string[]);
    if (entries.length)
      throw new Error(`${dir} holds ${entries.slice(0, 5).join(', ')} while mon.${name}'s disk is not mounted there: not mounting over it`);
    await this.mountOn(current.device, dir);
    log?.(`mon.${name}: its disk ${current.device} (uuid ${rec.uuid}) mounted at ${dir}`);
    return { rec: current, majMin: await this.blockDevice(current.device) };
  }

  /** After a monitor's store is removed: its disk is unmounted, its filesystem erased (the
   * disk is eligible again, as it was when chosen; only when it still holds the recorded UUID)
   * and forgotten. A disk that is gone is forgotten. */
  async release(name: string, dir: string): Promise<{ rec: MonDiskRecord; erased: boolean | string } | null> {
    const rec = await this.recorded(name);
    if (!rec) return null;
    if (await this.mountedAt(dir)) await this.unmount(dir);
    let erased: boolean | string = (await this.blockDevice(rec.device)) !== null && (await this.probe(rec.device)).uuid === rec.uuid;
    // Still mounted elsewhere (another mount namespace), wipefs refuses: the removal is done
    // all the same, and the disk keeps its filesystem until a disk.wipe.
    if (erased)
      erased = await this.run('wipefs', ['--all', rec.device]).then(
        () => true,
        (err: unknown) => String(err instanceof Error ? err.message : err),
      );
    await rm(this.recordFile(name), { force: true });
    return { rec, erased };
  }

  /** What is mounted at exactly `dir`, or null. */
  async mountedAt(dir: string): Promise<{ source: string; majMin: string } | null> {
    const out = await this.optional(['findmnt', '-J', '-n', '-o', 'TARGET,SOURCE,MAJ:MIN', '--mountpoint', dir], 1);
    const fs = out ? (JSON.parse(out) as { filesystems?: Array<{ source: string; 'maj:min': string }> }).filesystems?.[0] : undefined;
    return fs ? { source: fs.source, majMin: fs['maj:min'] } : null;
  }

  private async mountsOf(device: string): Promise<string[]> {
    const out = await this.optional(['findmnt', '-J', '-n', '-o', 'TARGET', '--source', device], 1);
    return out ? ((JSON.parse(out) as { filesystems?: Array<{ target: string }> }).filesystems ?? []).map((f) => f.target) : [];
  }

  /** blkid's low-level probe (no cache): exit 2 is "nothing found". */
  async probe(device: string): Promise<Signature> {
    return parseSignature((await this.optional(['blkid', '-p', '-o', 'export', device], 2)) ?? '');
  }

  /** The device holding the filesystem `uuid`, probed again: a udev link can outlive its disk. */
  private async findByUuid(uuid: string): Promise<string | null> {
    const found = (await this.optional(['blkid', '-c', '/dev/null', '-U', uuid], 2))?.trim();
    if (!found || !(await this.blockDevice(found))) return null;
    return (await this.probe(found)).uuid === uuid ? found : null;
  }

  private async mountOn(device: string, dir: string): Promise<void> {
    await mkdir(dir, { recursive: true, mode: 0o750 });
    await this.run('mount', ['-t', MON_FS_TYPE, '-o', 'noatime', device, dir]);
  }

  private async unmount(dir: string): Promise<void> {
    await this.run('umount', [dir]);
  }

  private async save(name: string, rec: MonDiskRecord): Promise<void> {
    await mkdir(this.o.recordDir, { recursive: true, mode: 0o750 });
    const tmp = `${this.recordFile(name)}.tmp`;
    await writeFile(tmp, JSON.stringify(rec));
    await rename(tmp, this.recordFile(name));
  }

  private run(cmd: string, args: string[], timeoutMs = TIMEOUT_MS) {
    return this.o.runner.run(cmd, args, { timeoutMs });
  }

  /** A command's stdout, or null when it exits with `none` (its "nothing found"). */
  private async optional([cmd, ...args]: [string, ...string[]], none: number): Promise<string | null> {
    try {
      return (await this.run(cmd, args)).stdout;
    } catch (err) {
      if (err instanceof CommandError && err.exitCode === none) return null;
      throw err;
    }
  }
}

export function parseSignature(text: string): Signature {
  const v = (k: string): string | undefined => new RegExp(`^${k}=(.*)$`, 'm').exec(text)?.[1];
  const sig: Signature = {};
  const [type, uuid, label, ptType] = [v('TYPE'), v('UUID'), v('LABEL'), v('PTTYPE')];
  if (type) sig.type = type;
  if (uuid) sig.uuid = uuid;
  if (label) sig.label = label;
  if (ptType) sig.ptType = ptType;
  return sig;
}

const isBlank = (s: Signature): boolean => !s.type && !s.ptType;
const isOurs = (s: Signature): boolean => s.type === MON_FS_TYPE && s.label === MON_FS_LABEL && !s.ptType;

/** What is on a disk that is not ours, as an operator would name it. */
function foreign(s: Signature): string {
  if (s.type === 'ceph_bluestore') return 'holds an OSD (a BlueStore label)';
  if (s.ptType) return `has a ${s.ptType} partition table`;
  return `has a ${s.type ?? 'foreign'} filesystem${s.label ? ` labelled ${s.label}` : ''}`;
}

/** "major:minor" as findmnt prints it, from the device's st_rdev (Linux's encoding). */
async function majMinOf(path: string): Promise<string | null> {
  const s = await stat(path).catch(() => null);
  if (!s?.isBlockDevice()) return null;
  const dev = BigInt(s.rdev);
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return `${major}:${minor}`;
}
