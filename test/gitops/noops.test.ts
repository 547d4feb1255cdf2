// No silent no-ops in the specs folder (issue 16): a selector that takes no disk, a node declared
// and never seen, a refused file that applies again, and every pending entry coming or going is
// said — in the plan, the file's status, the blocking reasons, GET /status's answer and an event,
// once. The folder over a memory store with a hand-driven clock: what it decides, not the loops.
import test from 'ava';
import { SpecsFolder } from '../../src/gitops/folder.js';
import { eventLogLevel } from '../../src/main/event-log.js';
import { nodeIdForMac } from '../../src/model/ids.js';
import { Kind, type DiskSpec } from '../../src/model/kinds.js';
import { Convergence } from '../../src/services/convergence.js';
import type { Store } from '../../src/store/types.js';
import type { AnyBusEvent } from '../../src/tasks/bus.js';
import { waitFor } from '../lab/harness.js';
import { nodeSpec } from '../store/helpers.js';
import { doc, files } from './fixtures.js';
import { MAC, NODE, id, osdStore } from './osd-fixtures.js';

const sources = {
  interfaces: { interfaces: () => Promise.resolve([]) },
  registry: { entries: () => Promise.resolve([]) },
};
const GHOST = '52:54:00:0f:0f:0f';
const GRACE = 60_000;

interface Lab {
  store: Store;
  folder: SpecsFolder;
  events: Array<{ type: string; payload: Record<string, unknown> }>;
  /** Moves the folder's clock on. */
  tick(ms: number): void;
}

async function folderOf(t: { teardown(fn: () => unknown): void }): Promise<Lab> {
  const store = await osdStore();
  let now = Date.parse('2026-01-01T00:00:00.000Z');
  const events: Lab['events'] = [];
  const folder = new SpecsFolder({
    store,
    sources,
    publish: (type, payload) => events.push({ type, payload: payload as Record<string, unknown> }),
    now: () => new Date(now).toISOString(),
    unseenGraceMs: GRACE,
  });
  await folder.ready();
  t.teardown(() => folder.stop());
  return { store, folder, events, tick: (ms) => (now += ms) };
}

const node = (osds: string, mac = MAC, name = 'n1') => doc('Node', name, `match: { mac: "${mac}" }\nosds: ${osds}`);
const of = (l: Lab, type: string) => l.events.filter((e) => e.type === type).map((e) => e.payload);
const fileOf = (l: Lab, file = 'site.yaml') => l.folder.status().find((s) => s.file === file)!;

test('no-ops: an all selector matching no disk of a node is pending with the node and the filters, in the plan, the status and the blocking reasons', async (t) => {
  const l = await folderOf(t);
  const text = node('[{ all: true, interface: nvme }]');
  const plan = await l.folder.plan('site.yaml', text);
  t.true(plan.valid, 'not an error: the disk may come later');
  const said = {
    kind: 'Node',
    name: 'n1',
    id: NODE,
    reason: 'SelectorMatchesNothing',
    message: 'no disk of node-1 matches osds/0 { all: true, interface: nvme } (8 disk(s) reported); a disk that matches later is taken',
  };
  t.deepEqual(plan.pending, [{ document: 0, ...said }]);

  const status = (await l.folder.fileChanged('site.yaml', text))!;
  t.is(status.state, 'pending');
  t.like(status.pending[0], { ...said, since: '2026-01-01T00:00:00.000Z' });
  const [conv] = await new Convergence(l.store).files(l.folder.status());
  t.false(conv!.converged);
  t.deepEqual(conv!.blocking[0], { kind: 'Node', id: NODE, name: 'n1', reason: 'SelectorMatchesNothing', message: said.message });
  t.false((await l.store.mustGet<DiskSpec>(Kind.Disk, id('NEW'))).spec.osd, 'nothing taken');

  // Disks that match but cannot take an OSD: each with why.
  await l.folder.fileChanged('site.yaml', node('[{ all: true, maxSize: 300GB }]'));
  t.like(fileOf(l).pending[0], {
    reason: 'SelectorMatchesNothing',
    message:
      'osds/0 { all: true, maxSize: 300GB } matches 1 disk(s) of node-1, none of which can take an OSD: /dev/sda: system-disk, has-filesystem',
  });

  // A selector that takes a disk is no no-op: nothing pending.
  const taking = (await l.folder.fileChanged('site.yaml', node('[{ all: true, rotational: false }]')))!;
  t.is(taking.state, 'applied');
  t.deepEqual(taking.pending, []);
  t.true((await l.store.mustGet<DiskSpec>(Kind.Disk, id('NEW'))).spec.osd);
});

test('no-ops: an all selector on a node that has not reported its disks waits for them, said as such', async (t) => {
  const l = await folderOf(t);
  const mac = '52:54:00:00:00:02';
  await l.store.create({
    kind: Kind.Node,
    id: nodeIdForMac(mac),
    name: 'node-2',
    spec: nodeSpec({ approved: true, macs: [mac], hostname: 'node-2' }),
    status: { phase: 'booting' },
  });
  const s = (await l.folder.fileChanged('two.yaml', node('[{ all: true }]', mac, 'n2')))!;
  t.like(s.pending[0], {
    id: nodeIdForMac(mac),
    reason: 'DisksNotReported',
    message: 'node node-2 has not reported its disks yet: osds/0 { all: true } waits for them',
  });
  t.like(of(l, 'specs.pending')[0], { file: 'two.yaml', reason: 'DisksNotReported', severity: 'info' });
});

test('no-ops: a pending entry is an event when it appears and when it goes, never again while unchanged', async (t) => {
  const l = await folderOf(t);
  const text = node('[{ all: true, interface: nvme }]');
  await l.folder.fileChanged('site.yaml', text);
  // The folder applies every file again on each world change: the same entries say nothing.
  await l.folder.fileChanged('site.yaml', text);
  await l.folder.fileChanged('site.yaml', text);
  t.deepEqual(
    of(l, 'specs.pending').map((p) => [p.file, p.document, p.kind, p.name, p.reason, p.severity]),
    [['site.yaml', 0, 'Node', 'n1', 'SelectorMatchesNothing', 'warning']],
  );
  t.deepEqual(of(l, 'specs.pending.cleared'), []);
  await l.folder.fileChanged('site.yaml', node('[{ all: true, interface: sata }]'));
  t.like(of(l, 'specs.pending.cleared'), [
    { file: 'site.yaml', name: 'n1', reason: 'SelectorMatchesNothing', since: '2026-01-01T00:00:00.000Z' },
  ]);
  t.is(of(l, 'specs.pending').length, 1);
  t.deepEqual(fileOf(l).pending, []);
});

test('no-ops: a node declared and not seen past the grace is NotSeen once, with since when and its MAC, in the file and GET /status', async (t) => {
  const l = await folderOf(t);
  const text = files(node('[]'), node('[]', GHOST, 'ghost'));
  await l.folder.fileChanged('site.yaml', text);
  t.like(fileOf(l).pending[0], { name: 'ghost', reason: 'NodeNotDiscovered' });
  t.like(of(l, 'specs.pending'), [{ name: 'ghost', reason: 'NodeNotDiscovered', severity: 'info' }]);
  l.tick(GRACE - 1);
  await l.folder.fileChanged('site.yaml', text);
  t.is(fileOf(l).pending[0]!.reason, 'NodeNotDiscovered', 'within the grace');
  l.tick(1);
  await l.folder.fileChanged('site.yaml', text);
  const p = fileOf(l).pending[0]!;
  t.is(p.reason, 'NotSeen');
  t.is(p.since, '2026-01-01T00:00:00.000Z');
  t.regex(
    p.message,
    /^not seen since 2026-01-01T00:00:00\.000Z \(longer than 1 min\): no machine with MAC 52:54:00:0f:0f:0f has booted yet/,
  );
  l.tick(GRACE);
  await l.folder.fileChanged('site.yaml', text);
  t.deepEqual(
    of(l, 'specs.pending').map((x) => x.reason),
    ['NodeNotDiscovered', 'NotSeen'],
    'passing the grace is said once',
  );
  t.is(of(l, 'specs.pending')[1]!.severity, 'warning');

  const summary = await new Convergence(l.store, () => l.folder.status()).summary();
  t.false(summary.converged);
  t.deepEqual(
    summary.blocked.find((b) => b.name === 'ghost'),
    { kind: 'Node', id: '', name: 'ghost', reason: 'NotSeen', message: p.message, since: p.since, checks: [], file: 'site.yaml' },
  );
  t.is(summary.convergence.find((c) => c.kind === 'Node')!.total, 2, 'the node seen and the one declared and not seen');
  const [conv] = await new Convergence(l.store).files(l.folder.status());
  t.like(
    conv!.blocking.find((b) => b.name === 'ghost'),
    { id: '', reason: 'NotSeen' },
  );
});

test('no-ops: a refused file that applies again says so with the error it had, even when the fix changes nothing', async (t) => {
  const l = await folderOf(t);
  const good = node('[{ all: true, rotational: false }]');
  await l.folder.fileChanged('site.yaml', good);
  const applied = of(l, 'specs.applied').length;
  await l.folder.fileChanged('site.yaml', 'kind: [');
  t.is(fileOf(l).state, 'failed');
  l.tick(5_000);
  await l.folder.fileChanged('site.yaml', 'kind: [');
  // The last good text put back: nothing to change, yet the file is no longer refused.
  await l.folder.fileChanged('site.yaml', good);
  t.is(of(l, 'specs.applied').length, applied, 'no change to announce');
  const recovered = of(l, 'specs.recovered');
  t.is(recovered.length, 1);
  t.like(recovered[0], { file: 'site.yaml', state: 'applied', failedSince: '2026-01-01T00:00:00.000Z' });
  t.regex((recovered[0]!.error as { message: string }).message, /^site\.yaml: 1 error\(s\); nothing was changed/);
  await l.folder.fileChanged('site.yaml', good);
  t.is(of(l, 'specs.recovered').length, 1, 'said once');
});

test('no-ops: the log level of these events: a pending entry that needs a look is a warning, a recovery info', (t) => {
  const ev = (type: string, payload: unknown): AnyBusEvent => ({ seq: 1, at: '2026-01-01T00:00:00.000Z', type, payload });
  t.is(eventLogLevel(ev('specs.pending', { reason: 'NotSeen', severity: 'warning' })), 'warn');
  t.is(eventLogLevel(ev('specs.pending', { reason: 'NodeNotDiscovered', severity: 'info' })), 'info');
  t.is(eventLogLevel(ev('specs.pending.cleared', { reason: 'NotSeen', severity: 'warning' })), 'info');
  t.is(eventLogLevel(ev('specs.recovered', { file: 'a.yaml' })), 'info');
});

test('no-ops: the folder looks again by itself when a declared node passes its grace, with no other change to wake it', async (t) => {
  const store = await osdStore();
  const events: Array<{ type: string; payload: Record<string, unknown> }> = [];
  const folder = new SpecsFolder({
    store,
    sources,
    publish: (type, payload) => events.push({ type, payload: payload as Record<string, unknown> }),
    unseenGraceMs: 200,
  });
  await folder.ready();
  t.teardown(() => folder.stop());
  await folder.fileChanged('site.yaml', node('[]', GHOST, 'ghost'));
  t.is(folder.status()[0]!.pending[0]!.reason, 'NodeNotDiscovered');
  const notSeen = await waitFor('NotSeen from the recheck timer', () =>
    events.find((e) => e.type === 'specs.pending' && e.payload.reason === 'NotSeen'),
  );
  t.like(notSeen.payload, { file: 'site.yaml', name: 'ghost', severity: 'warning' });
  t.is(folder.status()[0]!.pending[0]!.reason, 'NotSeen');
});
