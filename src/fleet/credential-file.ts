// An agent's credential kept in a file: the secret its install wrote, then the rotated one.
// Written through at once and renamed into place, so a crash leaves the old or the new secret,
// never half of one. Without a file it lives in memory only (a lab machine with no disk dir).
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AgentSecret, CredentialStore } from './agent-session.js';

export class CredentialFile implements CredentialStore {
  private stored: AgentSecret | null;

  constructor(private readonly file: string | null) {
    this.stored = file ? readSecret(file) : null;
  }

  get agentSecret(): AgentSecret | null {
    return this.stored;
  }

  saveAgentSecret(secret: AgentSecret): void {
    this.stored = { ...secret };
    if (!this.file) return;
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify(secret), { mode: 0o600, flush: true });
    renameSync(tmp, this.file);
  }
}

function readSecret(file: string): AgentSecret | null {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as Partial<AgentSecret>;
    return typeof v.username === 'string' && typeof v.secret === 'string'
      ? { username: v.username, secret: v.secret, rotated: v.rotated === true }
      : null;
  } catch {
    return null; // no file yet: a machine that was never installed
  }
}
