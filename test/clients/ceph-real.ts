// CephClient and RgwAdmin against a live cluster, through the real ZxRunner. Registered only
// when QUARRY_REAL_CEPH_CONF names a running cluster's ceph.conf (its [client] keyring, or
// QUARRY_REAL_CEPH_KEYRING, must hold client.admin): without it no test exists, so nothing is
// reported as skipped-but-passing. Everything created here has a unique name and is removed.
//
//   <ceph-mini-cluster.sh> up /tmp/c 27500    (docs/real-components.md, "The mini-cluster script")
//   QUARRY_REAL_CEPH_CONF=/tmp/c/ceph.conf npx ava dist/test/clients/ceph.test.js
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import type { TestFn } from 'ava';
import { CephClient } from '../../src/clients/ceph.js';
import { keyringText } from '../../src/clients/keyring.js';
import { RgwAdmin } from '../../src/clients/rgw-admin.js';
import { ZxRunner } from '../../src/exec/zx-runner.js';

export function registerRealClusterTests(test: TestFn): void {
  const conf = process.env.QUARRY_REAL_CEPH_CONF;
  if (conf === undefined || conf === '') return;
  const keyring = process.env.QUARRY_REAL_CEPH_KEYRING;
  const runner = new ZxRunner();
  const base = { runner, conf, name: 'client.admin', ...(keyring ? { keyring } : {}) };
  const ceph = new CephClient(base);
  const rgw = new RgwAdmin(base);
  const suffix = `${process.pid}-${Date.now().toString(36)}`;
  // Clean-up verbs Quarry's client does not offer (nothing in Quarry deletes these).
  const raw = (...verb: string[]) => runner.run('ceph', ceph.args(verb), { timeoutMs: 30_000 });

  test.serial('real cluster: every query parses, and the answers agree with each other', async (t) => {
    const [status, monmap, quorum, tree, osdStat, dump, pools, df] = await Promise.all([
      ceph.status(),
      ceph.monDump(),
      ceph.quorumStatus(),
      ceph.osdTree(),
      ceph.osdStat(),
      ceph.osdDump(),
      ceph.poolList(),
      ceph.df(),
    ]);
    t.is(monmap.fsid, status.fsid);
    t.is(dump.fsid, status.fsid);
    t.deepEqual(quorum.quorumNames, status.quorumNames);
    t.is(tree.nodes.filter((n) => n.type === 'osd').length, status.osdCount);
    t.is(osdStat.numUpOsds, status.osdUp);
    t.is(pools.length, status.poolCount);
    t.is(df.totalBytes, status.totalBytes);
    t.true(tree.nodes.filter((n) => n.type === 'osd' && !n.stray).every((n) => typeof n.host === 'string'));
    const [health, mgr, mds, fsList, pg, versions] = await Promise.all([
      ceph.health(),
      ceph.mgrStat(),
      ceph.mdsStat(),
      ceph.fsList(),
      ceph.pgStat(),
      ceph.versions(),
    ]);
    t.is(health.status, status.health);
    t.is(mgr.available, status.mgrAvailable);
    t.is(mds.filesystems.length, fsList.length);
    t.is(pg.numPgs, status.pgCount);
    t.true(Object.keys(versions.overall).every((v) => v.startsWith('ceph version 16.')));
  });

  test.serial('real cluster: gates answer with values, pool and fs creation are idempotent', async (t) => {
    const osd = (await ceph.osdTree()).nodes.find((n) => n.type === 'osd' && n.status === 'up');
    if (!osd) return t.fail('the cluster has no OSD up');
    t.is(typeof (await ceph.okToStop([osd.id])).ok, 'boolean');
    t.false((await ceph.safeToDestroy([osd.id])).safe, 'an up OSD is never safe to destroy');
    const pool = `quarry-test-${suffix}`;
    try {
      t.deepEqual(await ceph.poolCreate(pool, 8), { created: true });
      t.deepEqual(await ceph.poolCreate(pool, 8), { created: false });
    } finally {
      await raw('osd', 'pool', 'rm', pool, pool, '--yes-i-really-really-mean-it');
    }
    const fs = (await ceph.fsList())[0];
    if (fs) t.deepEqual(await ceph.fsNew(fs.name, fs.metadataPool, fs.dataPools[0] ?? ''), { created: false });
  });

  test.serial('real cluster: auth get-or-create, get, keyring text, osd new and mon getmap', async (t) => {
    const entity = `client.quarry-test-${suffix}`;
    try {
      const made = await ceph.authGetOrCreate(entity, { mon: 'allow r', osd: 'allow rw pool=nosuch' });
      t.deepEqual(await ceph.authGetOrCreate(entity, made.caps), made);
      t.deepEqual(await ceph.authGet(entity), made);
      // The plain-text keyring, as `ceph auth get` prints it without --format.
      const plainArgs = ['-c', conf, '-n', 'client.admin', ...(keyring ? ['-k', keyring] : []), 'auth', 'get', entity];
      const plain = await runner.run('ceph', plainArgs, { timeoutMs: 30_000 });
      t.is(keyringText(made), plain.stdout);
    } finally {
      await raw('auth', 'del', entity);
    }
    t.is(await ceph.authGet(entity), undefined);
    const uuid = randomUUID();
    const id = await ceph.osdNew(uuid, { cephxSecret: cephxKey() });
    try {
      t.is(await ceph.osdNew(uuid), id, 'the same uuid gets the same id');
    } finally {
      await raw('osd', 'purge', String(id), '--yes-i-really-mean-it');
    }
    const dir = await mkdtemp(join(tmpdir(), 'quarry-monmap-'));
    try {
      const got = await ceph.monGetmap(join(dir, 'monmap'));
      t.true((got.epoch ?? 0) >= 1);
      t.true((await stat(join(dir, 'monmap'))).size > 100);
      t.false((await readFile(join(dir, 'monmap'), 'latin1')).trimStart().startsWith('{'), 'binary, not JSON');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test.serial('real cluster: radosgw-admin user create/info with a masked secret key', async (t) => {
    const uid = `quarry-test-${suffix}`;
    const secretKey = `quarrytestsecret${suffix}`.padEnd(40, '0');
    try {
      const u = await rgw.userCreate({ uid, displayName: 'Quarry Test', accessKey: `QT${suffix}`.toUpperCase(), secretKey });
      t.is(u.keys[0]?.secretKey, secretKey);
      t.deepEqual(await rgw.userInfo(uid), u);
    } finally {
      await runner.run('radosgw-admin', rgw.args(['user', 'rm', `--uid=${uid}`]), { timeoutMs: 30_000 });
    }
    t.is(await rgw.userInfo(uid), undefined);
  });
}

/** A fresh cephx secret as `ceph-authtool --gen-print-key` makes it: type 1 (AES), creation
 * time, length 16, 16 random bytes, base64. */
function cephxKey(): string {
  const head = Buffer.alloc(12);
  head.writeUInt16LE(1, 0);
  head.writeUInt32LE(Math.floor(Date.now() / 1000), 2);
  head.writeUInt16LE(16, 10);
  return Buffer.concat([head, randomBytes(16)]).toString('base64');
}
