// What the agent reports of its node's hardware: whole disks that could hold data (with why
// one could not: the system disk, a filesystem or partitions) and network interfaces.
import { ipAddr, lsblk, type RawBlockDevice, type RawInterface } from '../clients/inventory.js';
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

export async function readInventory(runner: Runner, timeoutMs = 10_000): Promise<{ disks: DiskReport[]; nics: NicReport[] }> {
  const [devices, interfaces] = await Promise.all([lsblk(runner, timeoutMs), ipAddr(runner, timeoutMs)]);
  return { disks: disksFrom(devices), nics: nicsFrom(interfaces) };
}
