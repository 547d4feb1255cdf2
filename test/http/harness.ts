// Starts Quarry's HTTP app on 127.0.0.1:0 over an in-memory store and a temporary STATE_DIR,
// with cheap scrypt parameters (the OWASP ones are tested once, in passwords.test.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/model/clock.js';
import type { Logger } from '../../src/log.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { createHttpApp, type HttpApp, type HttpDeps, type Listening } from '../../src/http/app.js';
import { Client } from './client.js';
import type { Created } from './bodies.js';

export const ADMIN_PASSWORD = 'admin-password-1';
export const FAST_SCRYPT = { N: 2 ** 10, r: 8, p: 1 };

export interface Harness {
  http: HttpApp;
  listening: Listening;
  store: Store;
  clock: ManualClock;
  stateDir: string;
  base: string;
  printed: string[];
  logged: Array<{ level: string; message: string; fields?: Record<string, unknown> }>;
  client(): Client;
  /** A client logged in as that user (fails the test on a non-200). */
  login(username: string, password: string): Promise<Client>;
  admin(): Promise<Client>;
  /** Creates a non-admin user through the API and returns its id. */
  createUser(username: string, password?: string): Promise<string>;
  close(): Promise<void>;
}

export interface HarnessOptions extends Partial<Omit<HttpDeps, 'config'>> {
  adminPassword?: string | null;
  stateDir?: string;
  store?: Store;
  clock?: ManualClock;
  keepStateDir?: boolean;
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const stateDir = opts.stateDir ?? (await mkdtemp(join(tmpdir(), 'quarry-http-')));
  const store = opts.store ?? (await createMemoryStore());
  const clock = opts.clock ?? new ManualClock(Date.now());
  const printed: string[] = [];
  const logged: Harness['logged'] = [];
  const logger: Logger = (level, message, fields) => logged.push({ level, message, fields });
  const http = await createHttpApp({
    ...opts,
    logger: opts.logger ?? logger,
    store,
    clock,
    config: { stateDir, adminPassword: opts.adminPassword === undefined ? ADMIN_PASSWORD : opts.adminPassword },
    auth: { scrypt: FAST_SCRYPT, ...opts.auth },
    print: (line) => printed.push(line),
  });
  const listening = await http.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${listening.port}`;
  const h: Harness = {
    http,
    listening,
    store,
    clock,
    stateDir,
    base,
    printed,
    logged,
    client: () => new Client(base),
    async login(username, password) {
      const c = new Client(base);
      const r = await c.post('/user/login', { username, password });
      if (r.status !== 200) throw new Error(`login ${username}: ${r.status} ${r.text}`);
      return c;
    },
    admin: () => h.login('admin', ADMIN_PASSWORD),
    async createUser(username, password = `${username}-password`) {
      const admin = await h.admin();
      const r = await admin.post<Created>('/users', { username, password, name: `${username} person`, email: `${username}@example.com` });
      if (r.status !== 201) throw new Error(`create ${username}: ${r.status} ${r.text}`);
      return r.json.id;
    },
    async close() {
      await listening.close();
      http.auth.close();
      if (!opts.store) await store.close();
      if (!opts.keepStateDir) await rm(stateDir, { recursive: true, force: true });
    },
  };
  return h;
}
