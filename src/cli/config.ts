// Where the CLI keeps its server and API token: $XDG_CONFIG_HOME/quarry/config.json (default
// ~/.config), the directory 0700 and the file 0600, written to a temporary file and renamed so a
// crash never leaves half a token. QUARRY_SERVER, QUARRY_TOKEN and --server win over the file.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UnreachableError } from './errors.js';

export interface StoredConfig {
  server: string;
  token: string;
  /** The token's id, so logout can revoke it. */
  tokenId?: string;
}

export interface Connection {
  server: string;
  token: string;
  tokenId?: string;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'quarry');
}

export const configPath = (env: NodeJS.ProcessEnv = process.env): string => join(configDir(env), 'config.json');

export async function readConfig(env: NodeJS.ProcessEnv = process.env): Promise<StoredConfig | null> {
  let text: string;
  try {
    text = await readFile(configPath(env), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  let c: Partial<StoredConfig>;
  try {
    c = JSON.parse(text) as Partial<StoredConfig>;
  } catch {
    throw new UnreachableError(`${configPath(env)} is not valid JSON: run \`quarry login\` again`);
  }
  return typeof c.server === 'string' && typeof c.token === 'string' ? (c as StoredConfig) : null;
}

export async function writeConfig(c: StoredConfig, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = configDir(env);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const path = configPath(env);
  const tmp = join(dir, `.config.json.${randomBytes(6).toString('hex')}`);
  const fh = await open(tmp, 'wx', 0o600);
  try {
    await fh.writeFile(`${JSON.stringify(c, null, 2)}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  return path;
}

export async function removeConfig(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  await rm(configPath(env), { force: true });
}

/** A server URL as given: http(s) only, without a trailing slash. */
export function normalizeServer(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UnreachableError(`not a URL: ${url}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UnreachableError(`the server must be an http or https URL: ${url}`);
  return u.toString().replace(/\/+$/, '');
}

/** Server and token for a call: --server, then QUARRY_SERVER, then the file; QUARRY_TOKEN, then the file. */
export async function connection(server: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<Connection> {
  const stored = await readConfig(env);
  const url = server || env.QUARRY_SERVER || stored?.server;
  const token = env.QUARRY_TOKEN || stored?.token;
  if (!url || !token)
    throw new UnreachableError('not logged in: run `quarry login --server URL --username NAME` (or set QUARRY_SERVER and QUARRY_TOKEN)');
  return { server: normalizeServer(url), token, ...(stored?.tokenId && !env.QUARRY_TOKEN ? { tokenId: stored.tokenId } : {}) };
}
