// What a file waits for, followed from one apply to the next (src/gitops/pending.ts): since
// when, NotSeen past the grace, and an event only for what changed.
import test from 'ava';
import { PendingReason, duration, pendingSeverity, trackPending } from '../../src/gitops/pending.js';
import type { Pending } from '../../src/gitops/types.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const GRACE = 60_000;
const ghost: Pending = {
  document: 0,
  kind: 'Node',
  name: 'ghost',
  reason: PendingReason.NodeNotDiscovered,
  message: 'no machine with MAC 52:54:00:ff:ff:ff has booted yet',
};
const selector: Pending = {
  document: 1,
  kind: 'Node',
  name: 'n1',
  id: 'node-id',
  reason: PendingReason.SelectorMatchesNothing,
  message: 'no disk of h1 matches osds/0 { all: true, minSize: 100TB } (4 disk(s) reported); a disk that matches later is taken',
};

const summary = (events: ReturnType<typeof trackPending>['events']) => events.map((e) => [e.type, e.payload.name, e.payload.reason]);

test('pending tracking: a new entry gets its since and one event; the same entries again give none', (t) => {
  const first = trackPending('site.yaml', new Map(), [ghost, selector], T0, GRACE);
  t.deepEqual(first.pending, [
    { ...ghost, since: '2026-01-01T00:00:00.000Z' },
    { ...selector, since: '2026-01-01T00:00:00.000Z' },
  ]);
  t.deepEqual(summary(first.events), [
    ['specs.pending', 'ghost', 'NodeNotDiscovered'],
    ['specs.pending', 'n1', 'SelectorMatchesNothing'],
  ]);
  t.like(first.events[0]!.payload, { file: 'site.yaml', document: 0, kind: 'Node', severity: 'info' });
  t.like(first.events[1]!.payload, { id: 'node-id', severity: 'warning' });
  t.is(first.recheckAt, T0 + GRACE, 'looked at again when the node passes the grace');

  const again = trackPending('site.yaml', first.track, [ghost, selector], T0 + 1_000, GRACE);
  t.deepEqual(again.events, [], 'a re-apply with nothing new says nothing');
  t.is(again.pending[0]!.since, '2026-01-01T00:00:00.000Z', 'since is kept');
});

test('pending tracking: a node not seen past the grace becomes NotSeen once, naming since when and the MAC', (t) => {
  const first = trackPending('site.yaml', new Map(), [ghost], T0, GRACE);
  const late = trackPending('site.yaml', first.track, [ghost], T0 + GRACE, GRACE);
  t.is(late.pending[0]!.reason, 'NotSeen');
  t.regex(
    late.pending[0]!.message,
    /^not seen since 2026-01-01T00:00:00\.000Z \(longer than 1 min\): no machine with MAC 52:54:00:ff:ff:ff/,
  );
  t.deepEqual(summary(late.events), [['specs.pending', 'ghost', 'NotSeen']]);
  t.is(late.events[0]!.payload.severity, 'warning');
  t.is(late.recheckAt, null, 'nothing more to wait for');
  const later = trackPending('site.yaml', late.track, [ghost], T0 + 3 * GRACE, GRACE);
  t.deepEqual(later.events, [], 'said once, not on every apply');
  t.is(later.pending[0]!.reason, 'NotSeen');
});

test('pending tracking: an entry that goes is cleared as it last was; a corrected MAC starts its own wait', (t) => {
  const first = trackPending('site.yaml', new Map(), [ghost, selector], T0, GRACE);
  const late = trackPending('site.yaml', first.track, [ghost, selector], T0 + GRACE, GRACE);
  const fixed = { ...ghost, message: 'no machine with MAC 52:54:00:00:00:09 has booted yet' };
  const next = trackPending('site.yaml', late.track, [fixed], T0 + GRACE + 1, GRACE);
  t.deepEqual(summary(next.events), [
    ['specs.pending', 'ghost', 'NodeNotDiscovered'],
    ['specs.pending.cleared', 'ghost', 'NotSeen'],
    ['specs.pending.cleared', 'n1', 'SelectorMatchesNothing'],
  ]);
  t.is(next.pending[0]!.since, new Date(T0 + GRACE + 1).toISOString());
  t.is(next.recheckAt, T0 + 2 * GRACE + 1);
  const gone = trackPending('site.yaml', next.track, [], T0 + GRACE + 2, GRACE);
  t.deepEqual(summary(gone.events), [['specs.pending.cleared', 'ghost', 'NodeNotDiscovered']]);
  t.is(gone.track.size, 0);
});

test('pending tracking: two entries of one node that differ only in what they wait for are both kept', (t) => {
  const a = { ...selector, reason: 'DiskNotSeen', message: 'node h1 has reported no disk with serial A' };
  const b = { ...a, message: 'node h1 has reported no disk with serial B' };
  const out = trackPending('site.yaml', new Map(), [a, b, a], T0, GRACE);
  t.is(out.pending.length, 2);
  t.is(out.events.length, 2);
});

test('pending severity: what resolves by itself is info, anything that needs a look a warning', (t) => {
  t.is(pendingSeverity('NodeNotDiscovered'), 'info');
  t.is(pendingSeverity('MonitorStopping'), 'info');
  t.is(pendingSeverity('DisksNotReported'), 'info');
  for (const r of ['NotSeen', 'SelectorMatchesNothing', 'DiskNotSeen', 'DiskNotEligible', 'CatalogUnavailable'])
    t.is(pendingSeverity(r), 'warning', r);
});

test('pending duration reads as an operator would', (t) => {
  t.is(duration(300_000), '5 min');
  t.is(duration(90_000), '1.5 min');
  t.is(duration(1_500), '1.5 s');
  t.is(duration(7_200_000), '2 h');
});
