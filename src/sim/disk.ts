// What a simulated machine keeps on its system disk across reboots: the credential its agent
// was installed with and then rotated. With a directory, it also survives the lab itself, so a
// restarted Quarry (same STATE_DIR) finds its machines' agents able to log in again.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface AgentSecret {
  username: string;
  secret: string;
  /** False while it is the secret from the install boot answer, which must be rotated. */
  rotated: boolean;
}

export class MachineDisk {
  private stored: AgentSecret | null = null;
  private readonly file: string | null;

  constructor(mac: string, dir: string | null) {
    this.file = dir ? join(dir, `${mac.replace(/:/g, '')}.json`) : null;
    this.stored = this.file ? readSecret(this.file) : null;
  }

  get agentSecret(): AgentSecret | null {
    return this.stored;
  }

  /** Written through at once: a rotated secret lost to a crash would lock the agent out. */
  saveAgentSecret(secret: AgentSecret): void {
    this.stored = { ...secret };
    if (!this.file) return;
    mkdirSync(join(this.file, '..'), { recursive: true, mode: 0o700 });
    writeFileSync(this.file, JSON.stringify(secret), { mode: 0o600 });
  }
}

function readSecret(file: string): AgentSecret | null {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as Partial<AgentSecret>;
    return typeof v.username === 'string' && typeof v.secret === 'string' ? { username: v.username, secret: v.secret, rotated: v.rotated === true } : null;
  } catch {
    return null; // no file yet: a machine that was never installed
  }
}
