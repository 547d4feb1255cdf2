// The settings of a Quarry started on the test file's etcd (test/store/backends.ts useEtcd):
// tests that start several share a prefix and a secrets key, as controllers of one store do.
import type { ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../src/log.js';
import { startQuarry, type Quarry } from '../../src/main.js';
import { loadConfig, type Config } from '../../src/config.js';
import { etcdEndpoints } from '../store/backends.js';

export const ETCD_ADMIN_PASSWORD = 'etcd-admin-password';

/** STORE=etcd under `prefix`; STATE_DIR and SPECS_DIR inside `dir`; no lab machines. */
export function etcdQuarryConfig(
  dir: string,
  prefix: string,
  secretsKey = randomBytes(32).toString('base64'),
  extra: Record<string, string> = {},
): Readonly<Config> {
  return loadConfig({
    STATE_DIR: join(dir, 'state'),
    SPECS_DIR: join(dir, 'specs'),
    LAB_NODES: '0',
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PASSWORD: ETCD_ADMIN_PASSWORD,
    SECRETS_KEY: secretsKey,
    STORE: 'etcd',
    ETCD_ENDPOINTS: etcdEndpoints().join(','),
    ETCD_PREFIX: prefix,
    ...extra,
  });
}

/** A Quarry on the test file's etcd, stopped when the test ends, with a long leader lease (a
 * loaded machine's late keepalive deposes nobody) unless `env` says otherwise; `specs`: files
 * put in its SPECS_DIR before it starts. */
export async function startEtcdQuarry(
  t: ExecutionContext,
  prefix: string,
  secretsKey: string,
  opts: {
    env?: Record<string, string>;
    specs?: Record<string, string>;
    onDeposed?: (why: string) => void;
    /** Collects its warnings and errors (a failing test says what the controller said). */
    problems?: string[];
  } = {},
): Promise<Quarry> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-etcd-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'specs'));
  for (const [name, text] of Object.entries(opts.specs ?? {})) await writeFile(join(dir, 'specs', name), text);
  const q = await startQuarry({
    config: etcdQuarryConfig(dir, prefix, secretsKey, { LEADER_LEASE_TTL_S: '30', ...opts.env }),
    log: opts.problems
      ? (level, message, fields) => {
          if (level === 'warn' || level === 'error') opts.problems?.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`);
        }
      : silentLogger,
    print: () => {},
    auth: { scrypt: { N: 2 ** 10, r: 8, p: 1 } },
    onDeposed: opts.onDeposed ?? (() => {}),
  });
  t.teardown(() => q.stop());
  return q;
}
