// Block devices for the agent's unit tests, behind a FakeRunner: blkid, findmnt, mkfs.ext4,
// mount and umount answer from this small world (devices, their signatures, what is mounted
// where) and change it as the real commands would, so the monitor-disk decisions are tested
// without a disk. Nothing is mounted for real: what a disk holds is kept in a directory of its
// own while it is not mounted, and moved into the mount point while it is.
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { FakeRunner } from '../helpers/fake-runner.js';

export interface FakeDevice {
  majMin: string;
  type?: string;
  uuid?: string;
  label?: string;
  ptType?: string;
}

export class FakeDisks {
  readonly devices = new Map<string, FakeDevice>();
  /** Mount point → device path. */
  readonly mounts = new Map<string, string>();
  /** Devices still mounted somewhere this node does not see (another mount namespace). */
  readonly busy = new Set<string>();
  /** Every path added, detached ones too: blkid of any other path is left to the test's own script. */
  private readonly known = new Set<string>();
  private next = 16;

  /** `root`: where the disks' contents are kept while they are not mounted. */
  constructor(private readonly root: string) {}

  /** Every disk unmounted, as a reboot leaves them; their files go with them. */
  unmountAll(): void {
    for (const dir of [...this.mounts.keys()]) this.unmount(dir);
  }

  private contents(dev: string): string {
    return join(this.root, dev.replaceAll('/', '_'));
  }

  private unmount(dir: string): boolean {
    const dev = this.mounts.get(dir);
    if (!dev) return false;
    move(dir, this.contents(dev));
    this.mounts.delete(dir);
    return true;
  }

  /** A blank disk at `path` (or one with the given signature). */
  add(path: string, sig: Omit<FakeDevice, 'majMin'> = {}): FakeDevice {
    const d = { majMin: `8:${this.next++}`, ...sig };
    this.devices.set(path, d);
    this.known.add(path);
    return d;
  }

  /** The disk pulled out: no device at its path any more. */
  detach(path: string): void {
    this.devices.delete(path);
  }

  blockDevice = async (path: string): Promise<string | null> => this.devices.get(path)?.majMin ?? null;

  install(runner: FakeRunner): this {
    const at = (a: string[], flag: string): string => a[a.indexOf(flag) + 1]!;
    runner.always(
      (c, a) => c === 'blkid' && a[0] === '-p' && this.known.has(a.at(-1)!),
      (call) => {
        const dev = call.args.at(-1) as string;
        const d = this.devices.get(dev);
        if (!d || (!d.type && !d.ptType)) return { exitCode: 2 };
        const lines = [
          `DEVNAME=${dev}`,
          ...(['label', 'uuid', 'type', 'ptType'] as const).flatMap((k) =>
            d[k] ? [`${k === 'ptType' ? 'PTTYPE' : k.toUpperCase()}=${d[k]}`] : [],
          ),
        ];
        return { stdout: `${lines.join('\n')}\n` };
      },
    );
    runner.always(
      (c, a) => c === 'blkid' && a.includes('-U'),
      (call) => {
        const uuid = at(call.args as string[], '-U');
        const found = [...this.devices].find(([, d]) => d.uuid === uuid);
        return found ? { stdout: `${found[0]}\n` } : { exitCode: 2 };
      },
    );
    runner.always(
      (c, a) => c === 'findmnt' && a.includes('--mountpoint'),
      (call) => {
        const dir = at(call.args as string[], '--mountpoint');
        const dev = this.mounts.get(dir);
        if (!dev) return { exitCode: 1 };
        return {
          stdout: JSON.stringify({ filesystems: [{ target: dir, source: dev, 'maj:min': this.devices.get(dev)?.majMin ?? '0:0' }] }),
        };
      },
    );
    runner.always(
      (c, a) => c === 'findmnt' && a.includes('--source'),
      (call) => {
        const dev = at(call.args as string[], '--source');
        const targets = [...this.mounts].filter(([, d]) => d === dev).map(([target]) => ({ target }));
        return targets.length ? { stdout: JSON.stringify({ filesystems: targets }) } : { exitCode: 1 };
      },
    );
    runner.always(
      (c) => c === 'mkfs.ext4',
      (call) => {
        const a = call.args as string[];
        const d = this.devices.get(a.at(-1)!);
        if (!d) return { exitCode: 1, stderr: `The file ${a.at(-1)!} does not exist` };
        Object.assign(d, { type: 'ext4', uuid: randomUUID(), label: at(a, '-L') });
        mkdirSync(join(this.contents(a.at(-1)!), 'lost+found'), { recursive: true });
        delete d.ptType;
        return {};
      },
    );
    runner.always(
      (c) => c === 'mount',
      (call) => {
        const [dev, dir] = (call.args as string[]).slice(-2) as [string, string];
        const d = this.devices.get(dev);
        if (!d) return { exitCode: 32, stderr: `mount: ${dir}: special device ${dev} does not exist.` };
        if (d.type !== 'ext4') return { exitCode: 32, stderr: `mount: ${dir}: wrong fs type, bad option, bad superblock on ${dev}` };
        move(this.contents(dev), dir);
        this.mounts.set(dir, dev);
        return {};
      },
    );
    runner.always(
      (c, a) => c === 'wipefs' && this.known.has(a.at(-1)!),
      (call) => {
        const d = this.devices.get(call.args.at(-1) as string);
        if (!d) return { exitCode: 1, stderr: 'wipefs: error: No such file or directory' };
        if (this.busy.has(call.args.at(-1) as string))
          return {
            exitCode: 1,
            stderr: `wipefs: error: ${call.args.at(-1) as string}: probing initialization failed: Device or resource busy`,
          };
        this.devices.set(call.args.at(-1) as string, { majMin: d.majMin });
        rmSync(this.contents(call.args.at(-1) as string), { recursive: true, force: true });
        return {};
      },
    );
    runner.always(
      (c) => c === 'umount',
      (call) => {
        const dir = call.args.at(-1) as string;
        if (!this.unmount(dir)) return { exitCode: 32, stderr: `umount: ${dir}: not mounted.` };
        return {};
      },
    );
    return this;
  }
}

function move(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  if (!existsSync(from)) return;
  for (const e of readdirSync(from)) renameSync(join(from, e), join(to, e));
}
