// ceph.conf, rendered from the `ceph.conf` template (shipped as templates/ceph.conf.ejs; a PUT
// of its source changes what is served). The bytes served and the bytes hashed are the same
// string, so a worker's hash comparison is exact.
import { createHash } from 'node:crypto';

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

/** msgr2 on monPort; msgr1 on 6789 for the standard port, else the next port up. */
export function monAddrVec(ip: string, monPort: number): string {
  const v1 = monPort === 3300 ? 6789 : monPort + 1;
  return `[v2:${ip}:${monPort},v1:${ip}:${v1}]`;
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
  const withIp = mons.filter((m) => m.ip !== '');
  const running = withIp.filter((m) => m.running);
  const use = (running.length ? running : withIp).slice().sort((a, b) => a.hostname.localeCompare(b.hostname));
  return { monInitialMembers: use.map((m) => m.hostname), monHost: use.map((m) => monAddrVec(m.ip, monPort)) };
}
