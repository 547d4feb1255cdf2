// A node's hardware as the commands every Linux has print it: block devices (`lsblk -J -b -O`)
// and network interfaces (`ip -j addr`), parsed and checked like the Ceph client's output (only
// the fields read are required; util-linux and iproute2 add others).
import type { Runner } from '../exec/runner.js';
import { arr, bool, int, obj, OutputParser, shape, str, type Schema } from './ceph-output.js';

const nullable = (s: Schema): Schema => ({ anyOf: [s, { type: 'null' }] });
const nstr = nullable(str);

export interface RawBlockDevice {
  name: string;
  path: string;
  type: string;
  size: number | null;
  rota: boolean;
  ro: boolean;
  serial: string | null;
  wwn: string | null;
  model: string | null;
  vendor: string | null;
  tran: string | null;
  subsystems: string | null;
  fstype: string | null;
  mountpoints: Array<string | null>;
  children?: RawBlockDevice[];
}
const deviceProps: Record<string, Schema> = {
  name: str,
  path: str,
  type: str,
  size: nullable(int),
  rota: bool,
  ro: bool,
  serial: nstr,
  wwn: nstr,
  model: nstr,
  vendor: nstr,
  tran: nstr,
  subsystems: nstr,
  fstype: nstr,
  mountpoints: arr(nstr),
};
// Children have the same shape; one level of recursion by reference keeps ajv's compile simple.
const deviceSchema: Schema = {
  $id: 'blockdev',
  ...obj({ ...deviceProps, children: { type: 'array', items: { $ref: 'blockdev' } } }, ['children']),
};
const lsblkShape = shape<{ blockdevices: RawBlockDevice[] }>('lsblk', obj({ blockdevices: arr(deviceSchema) }));

export interface RawInterface {
  ifname: string;
  address?: string;
  mtu: number;
  operstate: string;
  flags: string[];
  link_type: string;
  addr_info: Array<{ family: string; local: string }>;
}
const ipShape = shape<RawInterface[]>(
  'ip-addr',
  arr(
    obj(
      {
        ifname: str,
        address: str,
        mtu: int,
        operstate: str,
        flags: arr(str),
        link_type: str,
        addr_info: arr(obj({ family: str, local: str })),
      },
      ['address'],
    ),
  ),
);

const parser = new OutputParser();
export const parseLsblk = (stdout: string): RawBlockDevice[] => parser.parse('lsblk -J -b -O', stdout, lsblkShape).blockdevices;
export const parseIpAddr = (stdout: string): RawInterface[] => parser.parse('ip -j addr', stdout, ipShape);

/** Every block device, partitions as children, sizes in bytes. */
export async function lsblk(runner: Runner, timeoutMs = 10_000): Promise<RawBlockDevice[]> {
  return parseLsblk((await runner.run('lsblk', ['-J', '-b', '-O'], { timeoutMs })).stdout);
}

export async function ipAddr(runner: Runner, timeoutMs = 10_000): Promise<RawInterface[]> {
  return parseIpAddr((await runner.run('ip', ['-j', 'addr'], { timeoutMs })).stdout);
}
