// The first start: with no user at all, create `admin`. Its password comes from ADMIN_PASSWORD
// or is generated, shown once on stdout and kept owner-only in STATE_DIR/admin-password, so an
// operator who missed the line can still read it on the host.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Logger } from '../../log.js';
import { ADMIN_PASSWORD_FILE, writeSecret } from './secret-files.js';
import type { UserDirectory } from './users.js';

export interface BootstrapOptions {
  stateDir: string;
  adminPassword: string | null;
  logger: Logger;
  /** Where the generated password is shown; stdout in production. */
  print: (line: string) => void;
}

export const MIN_PASSWORD_LENGTH = 8;

/** Returns the created admin's id, or null when users already existed. */
export async function ensureFirstAdmin(users: UserDirectory, opts: BootstrapOptions): Promise<string | null> {
  if ((await users.list()).length > 0) return null;
  let password = opts.adminPassword;
  if (password !== null && password.length < MIN_PASSWORD_LENGTH) {
    opts.logger('warn', `ADMIN_PASSWORD is shorter than ${MIN_PASSWORD_LENGTH} characters; change it after the first login`);
  }
  if (password === null) {
    password = randomBytes(18).toString('base64url');
    const file = join(opts.stateDir, ADMIN_PASSWORD_FILE);
    await writeSecret(file, `${password}\n`, false);
    opts.print(`Quarry: created user "admin" with generated password ${password} (also in ${file}, readable by its owner only)\n`);
  }
  const admin = await users.create({ username: 'admin', password, name: 'Administrator', email: '', isAdmin: true });
  opts.logger('info', 'created the first admin user', { username: 'admin', generated: opts.adminPassword === null });
  return admin.id;
}
