// What every command gets: where to write, the environment, and a client for the server that
// --server, QUARRY_SERVER, QUARRY_TOKEN or the config file names.
import type { Command } from 'commander';
import { ApiClient } from './client.js';
import { connection } from './config.js';
import { Lookup } from './resolve.js';

export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadStream;
}

export interface GlobalOptions {
  server?: string;
}

export async function clientFor(cmd: Command, io: Io): Promise<ApiClient> {
  const { server } = cmd.optsWithGlobals<GlobalOptions>();
  const c = await connection(server, io.env);
  return new ApiClient(c.server, c.token);
}

export async function lookupFor(cmd: Command, io: Io): Promise<{ api: ApiClient; find: Lookup }> {
  const api = await clientFor(cmd, io);
  return { api, find: new Lookup(api) };
}
