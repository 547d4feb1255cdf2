// ceph.conf, rendered from the `ceph.conf` template (shipped as templates/ceph.conf.ejs; a PUT
// of its source changes what is served). The bytes served and the bytes hashed are the same
// string, so a worker's hash comparison is exact.
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { QuarryError } from '../errors.js';

/** 422 TEMPLATE_FAILED, as a render the sandbox refuses. */
const refused = (message: string): QuarryError => new QuarryError(message, 422, 'TEMPLATE_FAILED');

export interface CephConfContext {
  fsid: string;
  monInitialMembers: string[];
  /** One entry per monitor, as Ceph writes addrvecs: [v2:ip:port,v1:ip:port]. */
  monHost: string[];
  publicNetwork: string | null;
  clusterNetwork: string | null;
  poolDefaults: { size: number; minSize: number };
}

/** The shipped templates: every *.ejs here is a template named by its file name. */
export const defaultTemplatesDir = new URL('../../../templates/', import.meta.url);

/** Renders a stored template by name with a context, within the sandbox's time limit. */
import type { RenderTemplate } from './template-file.js';

export type { RenderTemplate };

export class CephConfRenderer {
  constructor(private readonly render: RenderTemplate) {}

  renderConf(ctx: CephConfContext): Promise<string> {
    return this.render('ceph.conf', { ...ctx });
  }
}

/** msgr2 on monPort; msgr1 on 6789 for the standard port, else the next port up. Only a valid
 * IP goes into an address vector (an IPv6 one in brackets): the address comes from an agent's
 * report, and ceph.conf is served to every worker. */
export function monAddrVec(ip: string, monPort: number): string {
  const family = isIP(ip);
  if (family === 0) throw refused('a monitor address is not an IP address; it cannot go into ceph.conf');
  if (!Number.isInteger(monPort) || monPort < 1 || monPort > 65534) throw refused(`monitor port ${monPort} is out of range`);
  const v1 = monPort === 3300 ? 6789 : monPort + 1;
  const host = family === 6 ? `[${ip}]` : ip;
  return `[v2:${host}:${monPort},v1:${host}:${v1}]`;
}

export const sha256Hex = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');

/** The monitors a ceph.conf names: those running, or — before any runs, while the first one
 * bootstraps — those desired. Sorted, so the same cluster always renders the same bytes. */
export interface MonNode {
  hostname: string;
  ip: string;
  running: boolean;
}

export function monitorsForConf(mons: MonNode[], monPort: number): Pick<CephConfContext, 'monInitialMembers' | 'monHost'> {
  // An address that is not an IP counts as none (the report schema refuses such addresses at the
  // door; this keeps one from an older store out of the file).
  const withIp = mons.filter((m) => isIP(m.ip) !== 0);
  const running = withIp.filter((m) => m.running);
  const use = (running.length ? running : withIp).slice().sort((a, b) => a.hostname.localeCompare(b.hostname));
  return { monInitialMembers: use.map((m) => m.hostname), monHost: use.map((m) => monAddrVec(m.ip, monPort)) };
}
