// What the agent reports of its node's hardware: whole disks that could hold data (with why
// one could not: the system disk, a filesystem or partitions), the OSD a disk holds (its
// BlueStore label), and network interfaces.
import { ipAddr, lsblk, type RawBlockDevice, type RawInterface } from '../clients/inventory.js';
import { readLabel, readPending, type BluestoreLabel } from './bluestore-label.js';
import type { Runner } from '../exec/runner.js';
import type { DiskReport, NicReport } from '../fleet/types.js';

/** Mount points that make a disk the system disk. */
const SYSTEM_MOUNTS = new Set(['/', '/boot', '/boot/efi', '/usr', '/var', '[SWAP]']);

/** Whole disks (and loop devices, a test's disks) that could hold data; not RAM disks. */
export function disksFrom(devices: RawBlockDevice[]): DiskReport[] {
  return devices
    .filter((d) => (d.type === 'disk' || d.type === 'loop') && (d.size ?? 0) > 0 && !d.ro && !/^(zram|ram)\d/.test(d.name))
    .map((d) => {
      const tree = [d, ...descendants(d)];
      return {
        serial: d.serial?.trim() || d.wwn?.trim() || d.path,
        devicePath: d.path,
        sizeBytes: d.size ?? 0,
        rotational: d.rota,
        model: d.model?.trim() ?? '',
        vendor: d.vendor?.trim() ?? '',
        interface: d.tran ?? (d.type === 'loop' ? 'loop' : d.subsystems?.includes('virtio') ? 'virtio' : ''),
        isSystem: tree.some((x) => x.mountpoints.some((m) => m !== null && SYSTEM_MOUNTS.has(m))),
        hasFilesystem: (d.children?.length ?? 0) > 0 || tree.some((x) => x.fstype !== null),
      };
    });
}

const descendants = (d: RawBlockDevice): RawBlockDevice[] => (d.children ?? []).flatMap((c) => [c, ...descendants(c)]);

/** Every interface with a hardware address, loopback aside. */
export function nicsFrom(interfaces: RawInterface[]): NicReport[] {
  return interfaces
    .filter((i) => i.link_type !== 'loopback' && i.address !== undefined && /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i.test(i.address))
    .map((i) => ({
      name: i.ifname,
      mac: i.address!,
      ip: i.addr_info.find((a) => a.family === 'inet')?.local ?? '',
      connected: i.flags.includes('LOWER_UP'),
      mtu: i.mtu,
    }));
}

/** Whether a disk's head is worth reading for a BlueStore label: lsblk says `ceph_bluestore`,
 * or says nothing (without udev's database lsblk knows no FSTYPE: loop devices, containers). A
 * disk with another filesystem, partitions, or the system's mounts is not read. The inventory
 * runs every heartbeat: this is one 4 KiB read per candidate disk. */
export function mayHoldLabel(d: RawBlockDevice): boolean {
  if ((d.children?.length ?? 0) > 0 || d.mountpoints.some((m) => m !== null)) return false;
  return d.fstype === null || d.fstype === 'ceph_bluestore';
}

const FSID_PATTERN = /^[0-9a-fA-F-]{1,64}$/;
const MAX_OSD_ID = 2 ** 31 - 1;

/** What the report says of a label: an OSD's main device with its cluster and id recorded;
 * anything else (a db/wal device, a label mkfs did not finish writing) says nothing. */
export function labelReport(l: BluestoreLabel): DiskReport['bluestore'] {
  if (l.description !== 'main' || l.cephFsid === null || !FSID_PATTERN.test(l.cephFsid)) return undefined;
  if (l.whoami === null || l.whoami > MAX_OSD_ID) return undefined;
  return { fsid: l.cephFsid, osdUuid: l.osdUuid, osdId: l.whoami };
}

export type LabelReader = (device: string) => Promise<BluestoreLabel | null>;

/** The label at the head of a disk, unless an earlier heartbeat's read of it still hangs (a
 * dying disk): that disk is not read again until the kernel gives the last read back. */
export const heartbeatLabel: LabelReader = async (device) => (readPending(device) ? null : readLabel(device));

/** The disks with the BlueStore label each holds. A label that cannot be read or is damaged is
 * left out (blkid still refuses the disk to an OSD's creation); a label found marks the disk as
 * having a filesystem even where lsblk could not tell. */
export async function withLabels(devices: RawBlockDevice[], read: LabelReader = heartbeatLabel): Promise<DiskReport[]> {
  const byPath = new Map(devices.map((d) => [d.path, d]));
  return Promise.all(
    disksFrom(devices).map(async (disk) => {
      const raw = byPath.get(disk.devicePath);
      if (disk.isSystem || !raw || !mayHoldLabel(raw)) return disk;
      const label = await read(disk.devicePath).catch(() => null);
      const bluestore = label ? labelReport(label) : undefined;
      return bluestore ? { ...disk, hasFilesystem: true, bluestore } : disk;
    }),
  );
}

export async function readInventory(
  runner: Runner,
  timeoutMs = 10_000,
  read: LabelReader = heartbeatLabel,
): Promise<{ disks: DiskReport[]; nics: NicReport[] }> {
  const [devices, interfaces] = await Promise.all([lsblk(runner, timeoutMs), ipAddr(runner, timeoutMs)]);
  return { disks: await withLabels(devices, read), nics: nicsFrom(interfaces) };
}
