// What a simulated machine keeps on its system disk across reboots: the credential its agent
// was installed with and then rotated. With a directory, it also survives the lab itself, so a
// restarted Quarry (same STATE_DIR) finds its machines' agents able to log in again.
import { join } from 'node:path';
import type { AgentSecret } from '../fleet/agent-session.js';
import { CredentialFile } from '../fleet/credential-file.js';

export type { AgentSecret };

export class MachineDisk extends CredentialFile {
  constructor(mac: string, dir: string | null) {
    super(dir ? join(dir, `${mac.replace(/:/g, '')}.json`) : null);
  }
}
