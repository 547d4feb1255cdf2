// The settings of a Quarry started on the test file's etcd (test/store/backends.ts useEtcd):
// tests that start several share a prefix and a secrets key, as controllers of one store do.
import type { ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
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

/** A Quarry on the test file's etcd under `prefix`, in its own temporary directory, with a
 * cheap password hash; stopped and its directory removed when the test ends, pass or fail. */
export async function startEtcdQuarry(
  t: ExecutionContext,
  prefix: string,
  secretsKey: string,
  extra: Record<string, string>,
  onDeposed: (why: string) => void,
): Promise<Quarry> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-etcd-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const q = await startQuarry({
    config: etcdQuarryConfig(dir, prefix, secretsKey, extra),
    log: silentLogger,
    print: () => {},
    auth: { scrypt: { N: 2 ** 10, r: 8, p: 1 } },
    onDeposed,
  });
  t.teardown(() => q.stop());
  return q;
}
