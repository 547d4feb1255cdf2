// The settings of a Quarry started on the test file's etcd (test/store/backends.ts useEtcd):
// tests that start several share a prefix and a secrets key, as controllers of one store do.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
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
