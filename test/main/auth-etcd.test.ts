// Two controllers' Quarrys over one real etcd (STORE=etcd, issue #18): the scenarios of
// test/http/two-controllers.ts, where a change reaches the other controller through etcd's
// watch, over the network, and a refresh is decided by etcd's compare-and-swap.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../src/log.js';
import { startQuarry, type Quarry } from '../../src/main.js';
import { scenarios, type TwoControllers } from '../http/two-controllers.js';
import { etcdPrefix, useEtcd } from '../store/backends.js';
import { ETCD_ADMIN_PASSWORD, etcdQuarryConfig } from './etcd-quarry.js';

const started: Quarry[] = [];
const dirs: string[] = [];
let pair: TwoControllers | undefined;

// Serial hooks wait for the hooks declared before them, and the concurrent ones after wait for
// them: declared around useEtcd's, the controllers start after their etcd and stop before it.
test.serial.after.always(async () => {
  await Promise.all(started.map((q) => q.stop()));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

useEtcd(test);

test.serial.before(async () => {
  const prefix = etcdPrefix();
  const secretsKey = randomBytes(32).toString('base64');
  for (let i = 0; i < 2; i++) {
    const dir = await mkdtemp(join(tmpdir(), 'quarry-etcd-auth-'));
    dirs.push(dir);
    const config = etcdQuarryConfig(dir, prefix, secretsKey);
    started.push(await startQuarry({ config, log: silentLogger, print: () => {}, auth: { scrypt: { N: 2 ** 10, r: 8, p: 1 } } }));
  }
  const [a, b] = started as [Quarry, Quarry];
  pair = { a: { url: a.url, auth: a.http.auth }, b: { url: b.url, auth: b.http.auth }, store: a.store, adminPassword: ETCD_ADMIN_PASSWORD };
});

for (const [title, scenario] of Object.entries(scenarios)) {
  test.serial(`auth on etcd: ${title}`, (t) => scenario(t, pair!));
}
