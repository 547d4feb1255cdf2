// What a lab machine's firmware and installer make of Quarry's answers, as the real ones do:
// iPXE runs the script GET /boot/config returned (here: the `set quarry-*` lines and whether it
// boots a kernel, sleeps and asks again, or exits to the local disk), and the installer reads
// the agent's credential from the cloud-init user-data it fetched.
import { parse } from 'yaml';
import type { BootAnswer } from '../fleet/protocol.js';

export class BootScriptError extends Error {}

/** The boot answer an iPXE script amounts to. */
export function readBootScript(script: string): Omit<BootAnswer, 'credential'> {
  if (!script.startsWith('#!ipxe')) throw new BootScriptError('the boot answer is not an iPXE script');
  const vars = new Map<string, string>();
  for (const m of script.matchAll(/^set (quarry-[a-z-]+) (\S+)\s*$/gm)) vars.set(m[1] ?? '', m[2] ?? '');
  const nodeId = vars.get('quarry-node');
  const hostname = vars.get('quarry-hostname');
  if (!nodeId || !hostname) throw new BootScriptError('the iPXE script names no node');
  // The commands before the first label are what iPXE runs; the rest is the failure path.
  const main = script.split(/^:/m)[0] ?? '';
  const action = /^kernel /m.test(main) ? 'install' : /^chain /m.test(main) ? 'wait' : /^exit\b/m.test(main) ? 'local' : null;
  if (!action) throw new BootScriptError('the iPXE script neither boots a kernel, waits nor exits');
  return { nodeId, hostname, action };
}

/** The agent's credential from a cloud-init user-data: /etc/quarry/agent.json. */
export function readAgentConfig(userData: string): { username: string; secret: string } | null {
  const doc = parse(userData) as { write_files?: Array<{ path?: unknown; content?: unknown }> } | null;
  const file = doc?.write_files?.find((f) => f.path === '/etc/quarry/agent.json');
  if (typeof file?.content !== 'string') return null;
  const cfg = JSON.parse(file.content) as { username?: unknown; secret?: unknown };
  return typeof cfg.username === 'string' && typeof cfg.secret === 'string' ? { username: cfg.username, secret: cfg.secret } : null;
}
