// `ip -j addr`, typed: the master's Ethernet interfaces with their first IPv4 address. Run
// through the Runner like every command; inside a network namespace when one is given.
import type { Runner } from '../exec/runner.js';
import { masterNicId, type MasterInterface } from '../model/network-kinds.js';

interface IpAddrInfo {
  family?: string;
  local?: string;
  prefixlen?: number;
}

interface IpLink {
  ifname?: string;
  flags?: string[];
  mtu?: number;
  link_type?: string;
  address?: string;
  addr_info?: IpAddrInfo[];
}

export interface IpClientOptions {
  runner: Runner;
  /** `ip -n <netns>`: the interfaces of that namespace (tests, containers). */
  netns?: string | null;
  timeoutMs?: number;
}

/** Only Ethernet-type links can carry DHCP for machines; that leaves out loopback and tunnels. */
export function parseIpAddr(json: string): MasterInterface[] {
  const links = JSON.parse(json) as unknown;
  if (!Array.isArray(links)) throw new Error('ip -j addr: expected a JSON array');
  return (links as IpLink[])
    .filter(
      (l) =>
        l.link_type === 'ether' && typeof l.ifname === 'string' && typeof l.address === 'string' && !(l.flags ?? []).includes('LOOPBACK'),
    )
    .map((l) => {
      const mac = (l.address ?? '').toLowerCase();
      const v4 = (l.addr_info ?? []).find((a) => a.family === 'inet' && typeof a.local === 'string');
      const flags = l.flags ?? [];
      return {
        id: masterNicId(mac),
        name: l.ifname ?? '',
        mac,
        ip: v4?.local ?? '',
        prefix: v4?.prefixlen ?? 0,
        connected: flags.includes('UP') && flags.includes('LOWER_UP'),
        mtu: l.mtu ?? 0,
      };
    });
}

export class IpClient {
  constructor(private readonly opts: IpClientOptions) {}

  async interfaces(): Promise<MasterInterface[]> {
    const ns = this.opts.netns ? ['-n', this.opts.netns] : [];
    const out = await this.opts.runner.run('ip', [...ns, '-j', 'addr', 'show'], { timeoutMs: this.opts.timeoutMs ?? 5_000 });
    return parseIpAddr(out.stdout);
  }
}
