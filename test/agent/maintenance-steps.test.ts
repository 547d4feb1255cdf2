// The real agent's maintenance steps (#15 part 3): node.daemons-stop stops every Ceph daemon of
// the node, the monitor last, and writes down what it stopped; node.daemons-start starts exactly
// those again the way each was last started, the monitor first. Both idempotent.
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { agentSteps } from '../../src/agent/steps/index.js';
import { alive } from '../helpers/process.js';
import { fakeNode, type Node } from './helpers.js';

const steps = agentSteps();
const step = (name: string) => steps.get(name)!;
const LEASE = '2026-01-01T00:00:00.000Z';

/** A stand-in daemon whose command line names this node's conf (as a real one does), with its
 * pid file and the unit it was started from. */
async function daemon(
  t: Parameters<typeof fakeNode>[0],
  n: Node,
  type: 'mon' | 'mgr' | 'osd',
  id: string,
  cmd: string,
): Promise<ChildProcess> {
  const args = ['-c', n.host.conf, '-i', id];
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', ...args], { stdio: 'ignore' });
  t.teardown(() => {
    if (alive(child.pid!)) process.kill(child.pid!, 'SIGKILL');
  });
  await once(child, 'spawn');
  await mkdir(join(n.dir, 'run'), { recursive: true });
  await writeFile(n.host.pidFileOf(type, id), `${child.pid}\n`);
  await mkdir(join(n.dir, 'data', 'units'), { recursive: true });
  await writeFile(join(n.dir, 'data', 'units', `${type}.${id}.json`), JSON.stringify({ cmd, args }));
  return child;
}

test('daemons-stop stops every daemon of the node, the monitor last, and daemons-start starts those again, the monitor first', async (t) => {
  const n = await fakeNode(t);
  const mon = await daemon(t, n, 'mon', 'a', 'ceph-mon');
  const osd = await daemon(t, n, 'osd', '3', 'ceph-osd');
  const mgr = await daemon(t, n, 'mgr', 'n1', 'ceph-mgr');
  t.deepEqual(await n.host.report(), { mon: true, mgr: true, mds: false, rgw: false, nfs: false, osds: [3] });

  const out = await step('node.daemons-stop')(n.ctx({ lease: LEASE }));
  t.deepEqual(out, { stopped: ['mgr.n1', 'osd.3', 'mon.a'] });
  t.deepEqual(
    n.lines.map((l) => l.message),
    ['mgr.n1: stopped', 'osd.3: stopped', 'mon.a: stopped'],
  );
  for (const c of [mon, osd, mgr]) t.false(alive(c.pid!));
  t.deepEqual(await n.host.report(), { mon: false, mgr: false, mds: false, rgw: false, nfs: false, osds: [] });
  // Again (a retry after a crash): nothing left to stop, the list kept.
  t.deepEqual(await step('node.daemons-stop')(n.ctx({ lease: LEASE })), { stopped: [] });

  n.runner
    .expect('ceph-mon', ['-c', n.host.conf, '-i', 'a'])
    .expect('ceph-osd', ['-c', n.host.conf, '-i', '3'])
    .expect('ceph-mgr', ['-c', n.host.conf, '-i', 'n1']);
  t.deepEqual(await step('node.daemons-start')(n.ctx({ lease: LEASE })), { started: ['mon.a', 'osd.3', 'mgr.n1'] });
  n.runner.verify();
  await t.throwsAsync(stat(join(n.dir, 'data', 'maintenance-stopped.json')), undefined, 'the list is forgotten once all started');
  // Again: nothing was stopped since, nothing is started.
  t.deepEqual(await step('node.daemons-start')(n.ctx({ lease: LEASE })), { started: [] });
  t.is(n.runner.calls.length, 3);
});

test('daemons-start that fails keeps the list for its retry; the steps refuse arguments without a lease', async (t) => {
  const n = await fakeNode(t);
  await daemon(t, n, 'osd', '4', 'ceph-osd');
  await step('node.daemons-stop')(n.ctx({ lease: LEASE }));
  n.runner.expect('ceph-osd', ['-c', n.host.conf, '-i', '4'], () => ({ exitCode: 1, stderr: 'bluestore: cannot open' }));
  await t.throwsAsync(step('node.daemons-start')(n.ctx({ lease: LEASE })), { message: /cannot open/ });
  t.truthy(await stat(join(n.dir, 'data', 'maintenance-stopped.json')));
  n.runner.expect('ceph-osd', ['-c', n.host.conf, '-i', '4']);
  t.deepEqual(await step('node.daemons-start')(n.ctx({ lease: LEASE })), { started: ['osd.4'] });
  await t.throwsAsync(step('node.daemons-stop')(n.ctx({})), { message: /lease/ });
  await t.throwsAsync(step('node.daemons-start')(n.ctx({ lease: 'x; rm -rf /' })), { message: /lease/ });
});
