// The hardware of the simulated datacenter: racks of machines with a system disk, a few data
// disks of mixed kinds (some still carrying an old filesystem) and two NICs.
import type { DiskReport, NicReport } from '../fleet/types.js';
import { pick, seeded } from './random.js';

export interface SimDisk extends DiskReport {
  dead: boolean;
  /** A fault (Lab.stickySignature): what every wipe of this disk leaves behind, so its
   * read-back finds it. Not reported: the agent only sees its effect. */
  stickySignature?: string;
}

export interface MachineSpec {
  index: number;
  /** The boot NIC's MAC. */
  mac: string;
  disks: SimDisk[];
  nics: NicReport[];
  ip: string;
}

const GB = 1_000_000_000;
const DATA_DISKS = [
  { model: 'ST4000NM0035', vendor: 'Seagate', sizeBytes: 4000 * GB, rotational: true, interface: 'sata' },
  { model: 'MZ7LH960', vendor: 'Samsung', sizeBytes: 960 * GB, rotational: false, interface: 'sata' },
  { model: 'PM1725b', vendor: 'Samsung', sizeBytes: 1600 * GB, rotational: false, interface: 'nvme' },
  { model: 'HUS726T6TAL', vendor: 'HGST', sizeBytes: 6000 * GB, rotational: true, interface: 'sas' },
] as const;

const hex2 = (n: number): string => (n & 0xff).toString(16).padStart(2, '0');

export function macFor(index: number, nic = 0): string {
  return `52:54:${hex2(nic)}:${hex2(index >> 16)}:${hex2(index >> 8)}:${hex2(index)}`;
}

export function buildMachines(count: number, seed = 42, disksPerMachine?: number): MachineSpec[] {
  const rnd = seeded(seed);
  const machines: MachineSpec[] = [];
  for (let i = 1; i <= count; i++) {
    const n = disksPerMachine ?? 3 + Math.floor(rnd() * 2);
    const disks: SimDisk[] = [systemDisk(i)];
    for (let d = 0; d < n; d++) {
      const kind = pick(rnd, DATA_DISKS);
      const nvme = kind.interface === 'nvme';
      disks.push({
        ...kind,
        serial: `SIM${String(i).padStart(5, '0')}${String.fromCharCode(66 + d)}${Math.floor(rnd() * 1e6)
          .toString(36)
          .toUpperCase()}`,
        devicePath: nvme ? `/dev/nvme${d}n1` : `/dev/sd${String.fromCharCode(98 + d)}`,
        isSystem: false,
        // Every third machine comes with an old filesystem on its first data disk.
        hasFilesystem: i % 3 === 0 && d === 0,
        dead: false,
      });
    }
    const ip = `10.${(i >> 16) & 0xff}.${(i >> 8) & 0xff}.${i & 0xff}`;
    machines.push({
      index: i,
      mac: macFor(i),
      disks,
      ip,
      nics: [
        { name: 'eno1', mac: macFor(i), ip, connected: true, mtu: 1500 },
        { name: 'eno2', mac: macFor(i, 1), ip: '', connected: true, mtu: 9000 },
      ],
    });
  }
  return machines;
}

function systemDisk(i: number): SimDisk {
  return {
    serial: `SIM${String(i).padStart(5, '0')}A-SYS`,
    devicePath: '/dev/sda',
    sizeBytes: 240 * GB,
    rotational: false,
    model: 'SSDSC2KB240G8',
    vendor: 'Intel',
    interface: 'sata',
    isSystem: true,
    hasFilesystem: true,
    dead: false,
  };
}
