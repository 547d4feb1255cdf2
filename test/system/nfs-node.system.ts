// The NFS gateway's node steps for real, before the nfs kind is wired into the API: on one
// loopback node (node-sandbox.ts) a monitor, a manager, an OSD on a loop device and an MDS come
// up through the agent's steps, the master's side makes a filesystem and the gateway's key (the
// caps of docs/real-components.md, "NFS gateway"), then startNfs runs nfs-ganesha with the Ceph
// FSAL, and a userspace NFS client writes a file through it that the data pool then holds
// (nfs-check.ts). stopNfs stops it again.
import test from 'ava';
import { DAEMONS } from '../../src/catalogue/index.js';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { agentSteps } from '../../src/agent/steps/index.js';
import { CommandError } from '../../src/errors.js';
import { OSD_CAPS } from '../../reconcilers/osd/plan.js';
import { nfsRoundTrip } from './nfs-check.js';
import { monitorAnswer, newKey, sandbox, until, type Sandbox } from './node-sandbox.js';

const steps = agentSteps();
const startNfs = steps.get(DAEMONS.nfs.steps.start)!;
const stopNfs = steps.get(DAEMONS.nfs.steps.stop)!;
const run = (s: Sandbox, name: string, args: Record<string, unknown>) => steps.get(name)!(s.ctx(args));
const FS = 'qnfs';

test('nfs gateway started by its agent step exports a CephFS that a userspace NFS client writes into and the data pool holds', async (t) => {
  const s = await sandbox(t);
  // Registered after the sandbox's: ava runs teardowns last-first, so the gateway (a client of
  // the MDS and OSDs) stops before the daemons it uses (docs/real-components.md, teardown order).
  t.teardown(() => s.host.stop('nfs', 'a'));
  const caps = (c: Readonly<Record<string, string>>) => ({ ...c });
  await run(s, 'ceph.mon.bootstrap', { fsid: s.fsid, monName: 'a', addr: '127.0.0.1', monPort: s.port, devicePath: await s.addDisk() });
  await monitorAnswer(s);
  await s.importAdmin();
  s.master.add('mgr.a', (await s.admin.authGetOrCreate('mgr.a', caps(DAEMONS.mgr.caps))).key, caps(DAEMONS.mgr.caps));
  await run(s, 'ceph.mgr.start', { name: 'a', fsid: s.fsid });
  const uuid = randomUUID();
  const secret = newKey();
  const osdId = await s.admin.osdNew(uuid, { cephxSecret: secret });
  s.master.add(`osd.${osdId}`, secret, caps(OSD_CAPS));
  await run(s, 'ceph.osd.create', { osdId, uuid, devicePath: s.device, deviceClass: 'ssd' });
  s.master.add('mds.a', (await s.admin.authGetOrCreate('mds.a', caps(DAEMONS.mds.caps))).key, caps(DAEMONS.mds.caps));
  await run(s, 'ceph.mds.start', { name: 'a', fsid: s.fsid });
  await s.admin.poolCreate(`${FS}_metadata`, 8);
  await s.admin.poolCreate(`${FS}_data`, 8);
  await s.admin.fsNew(FS, `${FS}_metadata`, `${FS}_data`);
  await until(
    'an active MDS and every PG active+clean',
    () => s.admin.status({ timeoutMs: 20_000 }),
    (st) => st.osdUp === 1 && st.pgStates.length > 0 && st.pgStates.every((p) => p.state === 'active+clean'),
    180_000,
  );

  // The gateway's own key: what `ceph fs authorize <fs> client.nfs.a / rw` grants.
  const nfsCaps = { mon: `allow r fsname=${FS}`, mds: `allow rw fsname=${FS}`, osd: `allow rw tag cephfs data=${FS}` };
  s.master.add('client.nfs.a', (await s.admin.authGetOrCreate('client.nfs.a', nfsCaps)).key, nfsCaps);
  const port = s.port + 3;
  const started = Date.now();
  // The filesystem's MDS may still be joining: a start without the export fails and is retried,
  // as the gateway's loop would.
  const out = await until(
    'the gateway serving its export',
    () => startNfs(s.ctx({ name: 'a', fsid: s.fsid, export: FS, port })),
    () => true,
    120_000,
  );
  t.log(`startNfs: ${Date.now() - started} ms`);
  t.deepEqual(out, { name: 'a', export: FS, path: '/', pseudo: `/${FS}`, endpoint: `127.0.0.1:${port}` });
  const pid = await s.host.pidOf('nfs', 'a');
  t.truthy(pid);

  const cephArgs = ['-c', s.host.conf, '-n', 'client.admin', '-k', join(s.dir, 'admin.keyring')];
  const trip = await nfsRoundTrip({ runner: s.runner, cephArgs, addr: '127.0.0.1', port, fs: FS });
  t.log(`nfs-cp write ${trip.writeMs} ms, read ${trip.readMs} ms; object ${trip.object} of ${trip.dataPool}`);
  t.is(trip.dataPool, `${FS}_data`);
  t.regex(trip.object, /^[0-9a-f]+\.00000000$/);

  // Idempotent: started again, the same gateway keeps running.
  await startNfs(s.ctx({ name: 'a', fsid: s.fsid, export: FS, port }));
  t.is(await s.host.pidOf('nfs', 'a'), pid);
  // An undesired gateway is stopped; clients are refused from then on.
  t.deepEqual(await stopNfs(s.ctx({ name: 'a' })), { name: 'a' });
  t.is(await s.host.pidOf('nfs', 'a'), null);
  const refused = await s.runner
    .run('nfs-cat', [`nfs://127.0.0.1/${FS}/${trip.name}?version=4&nfsport=${port}`], { timeoutMs: 30_000 })
    .catch((e: unknown) => e);
  t.true(refused instanceof CommandError);
  // No secret went into a step's log.
  const logged = s.lines.map((l) => l.message).join('\n');
  for (const k of s.master.keys) t.false(logged.includes(k.keyring.split('key = ')[1]!.split('\n')[0]!));
});
