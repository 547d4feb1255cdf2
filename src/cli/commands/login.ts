// login: a password session, traded at once for a long-lived API token (scope write, named for
// this machine) that is stored in the config file; the session is closed again. logout revokes
// the token and removes the file.
import type { Command } from 'commander';
import { hostname } from 'node:os';
import { ApiClient } from '../client.js';
import { configPath, normalizeServer, readConfig, removeConfig, writeConfig } from '../config.js';
import type { GlobalOptions, Io } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { promptHidden, readStdin } from '../prompt.js';

interface CreatedToken {
  id: string;
  name: string;
  scope: string;
  expiresAt: string;
  token: string;
}

/** `quarry-cli-<hostname>`, kept to the characters and length a token name may have. */
export function tokenName(host = hostname()): string {
  const clean = host.replace(/[^A-Za-z0-9._@-]/g, '-');
  return `quarry-cli-${clean}`.slice(0, 64);
}

const cookieOf = (headers: Headers): string =>
  headers
    .getSetCookie()
    .map((c) => c.split(';')[0] ?? '')
    .filter((c) => c.includes('=') && !c.endsWith('='))
    .join('; ');

async function login(cmd: Command, io: Io, o: { username: string; passwordStdin?: boolean; expiresInDays?: string }): Promise<void> {
  const { server } = cmd.optsWithGlobals<GlobalOptions>();
  const url = server || io.env.QUARRY_SERVER;
  if (!url) throw new UsageError('login needs --server URL (or QUARRY_SERVER)');
  const days = o.expiresInDays === undefined ? undefined : Number(o.expiresInDays);
  if (days !== undefined && !(Number.isInteger(days) && days >= 1 && days <= 3650))
    throw new UsageError('--expires-in-days must be a whole number of days from 1 to 3650');
  const password = o.passwordStdin
    ? await readStdin(io.stdin)
    : await promptHidden(io.stdin, (s) => io.err(s), `password for ${o.username}: `);
  if (!password) throw new UsageError('the password is empty');
  const anonymous = new ApiClient(normalizeServer(url), null);
  const session = await anonymous.send('POST', '/user/login', { json: { username: o.username, password } });
  const cookie = cookieOf(session.headers);
  const body = { name: tokenName(), scope: 'write', ...(days ? { expiresInDays: days } : {}) };
  let created: CreatedToken;
  try {
    created = (await anonymous.send<CreatedToken>('POST', '/user/tokens', { json: body, cookie })).body;
  } finally {
    // The password session was only the way to the token.
    await anonymous.send('POST', '/user/logout', { cookie, accept: [401] }).catch(() => undefined);
  }
  const path = await writeConfig({ server: anonymous.server, token: created.token, tokenId: created.id }, io.env);
  io.out(
    `logged in to ${anonymous.server} as ${o.username}: token ${created.name} (${created.scope}, expires ${created.expiresAt.slice(0, 10)}) stored in ${path}`,
  );
}

async function logout(io: Io): Promise<void> {
  const stored = await readConfig(io.env);
  if (!stored) throw new CliError(`not logged in (no ${configPath(io.env)})`);
  let failure: unknown = null;
  if (stored.tokenId) {
    try {
      // The token stored is revoked where it was issued, whatever QUARRY_SERVER says now.
      const api = new ApiClient(normalizeServer(stored.server), stored.token);
      await api.send('DELETE', `/user/tokens/${encodeURIComponent(stored.tokenId)}`, { accept: [401, 404] });
    } catch (err) {
      failure = err;
    }
  }
  await removeConfig(io.env);
  if (failure) {
    io.err(`removed ${configPath(io.env)}, but the token could not be revoked: revoke it with DELETE /user/tokens/${stored.tokenId}`);
    throw failure instanceof Error ? failure : new CliError('the token could not be revoked');
  }
  io.out(`logged out: token revoked, ${configPath(io.env)} removed`);
}

export function registerLogin(program: Command, io: Io): void {
  program
    .command('login')
    .description('log in with a password and store a long-lived API token (scope write) in the config file')
    .requiredOption('-u, --username <name>', 'the user to log in as')
    .option('--password-stdin', 'read the password from stdin instead of asking for it')
    .option('--expires-in-days <days>', "how long the token lives (1-3650; default: the server's, 90)")
    .addHelpText(
      'after',
      '\nThe server is --server URL or QUARRY_SERVER. The password is never taken from the command line.\n' +
        'The token is stored in $XDG_CONFIG_HOME/quarry/config.json (default ~/.config), readable by you alone.',
    )
    .action((o: { username: string; passwordStdin?: boolean; expiresInDays?: string }, cmd: Command) => login(cmd, io, o));
  program
    .command('logout')
    .description('revoke the stored API token and remove the config file')
    .action(() => logout(io));
}
