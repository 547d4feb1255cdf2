// The real node steps on this machine, as root, on loopback only: monitor bootstrap → a second
// monitor joining from another "node" (127.0.0.2), each monitor's store on a loop device of its
// own → manager → OSD on a loop device (BlueStore on the whole device) → MDS → gateway → the
// second monitor removed (its disk unmounted), each through the agent's step code and the real Runner, keys from the master's side (Quarry's key generator
// and the cluster's own `ceph auth get-or-create` / `osd new`); then `ceph status` through
// Quarry's typed client shows quorum, the OSD up and in and the manager active.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { CommandError } from '../../src/errors.js';
import { DAEMONS } from '../../src/catalogue/index.js';
import { randomUUID } from 'node:crypto';
import { agentSteps } from '../../src/agent/steps/index.js';
import { OSD_CAPS } from '../../reconcilers/osd/plan.js';
import { monitorAnswer, newKey, sandbox, until, type Sandbox } from './node-sandbox.js';
import type { CephStatus } from '../../src/clients/ceph.js';
import type { CephHost } from '../../src/agent/ceph-host.js';

const steps = agentSteps();
const run = (s: Sandbox, name: string, args: Record<string, unknown>, on?: CephHost) => steps.get(name)!(s.ctx(args, on));

test('agent steps bring up two monitors (bootstrap, join), mgr, osd on a loop device, mds and rgw, and remove a monitor', async (t) => {
  const started = Date.now();
  const s = await sandbox(t);
  const caps = (c: Readonly<Record<string, string>>) => ({ ...c });

  await run(s, 'ceph.mon.bootstrap', { fsid: s.fsid, monName: 'a', addr: '127.0.0.1', monPort: s.port, devicePath: await s.addDisk() });
  // The node's mkfs had mon. alone: the master's client.admin is refused until it imports it.
  const answer = await monitorAnswer(s);
  t.regex(answer, /RADOS permission denied/);
  await s.importAdmin();
  await until(
    'quorum',
    () => s.admin.monStat({ timeoutMs: 10_000 }),
    (m) => m.quorum.some((q) => q.name === 'a'),
  );

  // A second monitor on another node (another loopback address) joins with the master's monmap.
  const b = s.addNode('n2', '127.0.0.2');
  const bDisk = await s.addDisk();
  await run(s, 'ceph.mon.join', { monName: 'b', addr: '127.0.0.2', monPort: s.port, devicePath: bDisk }, b);
  await until(
    'a quorum of two',
    () => s.admin.monStat({ timeoutMs: 10_000 }),
    (m) => m.quorum.length === 2,
  );

  s.master.add('mgr.a', (await s.admin.authGetOrCreate('mgr.a', caps(DAEMONS.mgr.caps))).key, caps(DAEMONS.mgr.caps));
  await run(s, 'ceph.mgr.start', { name: 'a', fsid: s.fsid });

  const uuid = randomUUID();
  const secret = newKey();
  const osdId = await s.admin.osdNew(uuid, { cephxSecret: secret });
  s.master.add(`osd.${osdId}`, secret, caps(OSD_CAPS));
  await run(s, 'ceph.osd.create', { osdId, uuid, devicePath: s.device, sizeBytes: 3 * 2 ** 30, deviceClass: 'ssd' });

  s.master.add('mds.a', (await s.admin.authGetOrCreate('mds.a', caps(DAEMONS.mds.caps))).key, caps(DAEMONS.mds.caps));
  await run(s, 'ceph.mds.start', { name: 'a', fsid: s.fsid });

  s.master.add('client.rgw.a', (await s.admin.authGetOrCreate('client.rgw.a', caps(DAEMONS.rgw.caps))).key, caps(DAEMONS.rgw.caps));
  await run(s, 'ceph.rgw.start', { name: 'a', fsid: s.fsid, port: s.port + 2 });

  const status: CephStatus = await until(
    'osd up/in and mgr active',
    () => s.admin.status({ timeoutMs: 20_000 }),
    (st) => st.osdUp === 1 && st.osdIn === 1 && st.mgrAvailable,
  );
  t.deepEqual(status.quorumNames, ['a', 'b']);
  t.like(await b.report(), { mon: true, mgr: false, osds: [] });
  t.is(status.fsid, s.fsid);
  await until(
    'rgw answering S3',
    () => fetch(`http://127.0.0.1:${s.port + 2}/`).then((r) => r.status),
    (c) => c === 200,
  );
  t.deepEqual(await s.host.report(), { mon: true, mgr: true, mds: true, rgw: true, nfs: false, osds: [osdId] });
  t.log(`bring-up through the agent steps: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  // The master takes mon.b out of the monmap (quorum stays: a alone is a majority of one),
  // then the node's step stops it and deletes its store.
  await s.runner.run('ceph', s.admin.args(['mon', 'remove', 'b']), { timeoutMs: 30_000 });
  await run(s, 'ceph.mon.remove', { monName: 'b' }, b);
  t.false((await b.report()).mon);
  // Its disk unmounted and blank again (blkid finds nothing: exit 2).
  t.false((await readFile('/proc/self/mounts', 'utf8')).includes(b.dataDirOf('mon', 'b')));
  const probe = await s.runner.run('blkid', ['-p', bDisk], { timeoutMs: 10_000 }).catch((e: unknown) => e as CommandError);
  t.is(probe instanceof CommandError ? probe.exitCode : 0, 2);
  await until(
    'a quorum of one',
    () => s.admin.monStat({ timeoutMs: 10_000 }),
    (m) => m.numMons === 1 && m.quorum.length === 1,
  );
  // No secret went into a step's log.
  const logged = s.lines.map((l) => l.message).join('\n');
  for (const k of s.master.keys) t.false(logged.includes(k.keyring.split('key = ')[1]!.split('\n')[0]!));
  t.false(logged.includes(s.adminKey));
  t.false(
    s.master.keys.some((k) => k.entity === 'client.admin'),
    'no node was handed client.admin',
  );
});
