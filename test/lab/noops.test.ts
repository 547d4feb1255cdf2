// No silent no-ops, against the lab and over HTTP (issue 16): a mistyped MAC turns NotSeen once
// its grace has passed, said once on /events and shown by GET /status and /specs/status; the
// corrected MAC clears it; a selector that takes no disk is said with the node and its filters;
// a broken file that is fixed says it applies again. A real EventSource reads /events.
import test from 'ava';
import { EventSource } from 'eventsource';
import type { FileConvergence, StatusSummary } from '../../src/services/convergence.js';
import { doc } from '../gitops/fixtures.js';
import { specsLab } from '../gitops/helpers.js';
import { waitFor } from './harness.js';

const MAC1 = '52:54:00:00:00:01';
const TYPO = '52:54:00:00:00:10';

interface Seen {
  type: string;
  at?: string;
  payload: Record<string, unknown>;
}

test('no-ops lab: a mistyped MAC is NotSeen once past its grace, the fix clears it, an empty selector and a fixed file are said', async (t) => {
  const q = await specsLab(t, 1, { env: { NODE_UNSEEN_GRACE_MS: '1500' } });
  const c = await q.admin();
  const cookie = [...c.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const es = new EventSource(`${q.url}/events`, { fetch: (url, init) => fetch(url, { ...init, headers: { ...init.headers, cookie } }) });
  t.teardown(() => es.close());
  const seen: Seen[] = [];
  es.onmessage = (m) => seen.push(JSON.parse(m.data as string) as Seen);
  await new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => reject(new Error(`EventSource error ${String((e as { code?: number }).code)}`));
  });
  const specs = (type: string, reason?: string) =>
    seen.filter((e) => e.type === type && e.payload.file === 'site.yaml' && (reason === undefined || e.payload.reason === reason));
  const node = (mac: string, osds: string) => doc('Node', 'storage-1', `match: { mac: "${mac}" }\nosds: ${osds}`);

  await q.put('site.yaml', node(TYPO, '[{ all: true, minSize: 100TB }]'));
  const first = await waitFor('specs.pending NodeNotDiscovered over SSE', () => specs('specs.pending', 'NodeNotDiscovered')[0]);
  t.like(first.payload, { document: 0, kind: 'Node', name: 'storage-1', severity: 'info' });
  t.truthy(first.at, 'every event says when');
  const notSeen = await waitFor('specs.pending NotSeen over SSE', () => specs('specs.pending', 'NotSeen')[0], 20_000);
  t.like(notSeen.payload, { name: 'storage-1', severity: 'warning', since: first.payload.since });
  t.regex(notSeen.payload.message as string, new RegExp(`^not seen since \\S+ \\(longer than 1.5 s\\): no machine with MAC ${TYPO}`));

  const status = (await c.get<StatusSummary>('/status')).json;
  t.false(status.converged);
  t.like(
    status.blocked.find((b) => b.name === 'storage-1'),
    { kind: 'Node', id: '', reason: 'NotSeen', file: 'site.yaml', since: first.payload.since as string },
  );
  const file = (await c.get<FileConvergence[]>('/specs/status')).json.find((f) => f.file === 'site.yaml')!;
  t.is(file.state, 'pending');
  t.like(file.blocking[0], { kind: 'Node', id: '', name: 'storage-1', reason: 'NotSeen' });
  t.like(file.pending[0], { reason: 'NotSeen', since: first.payload.since as string });

  // The MAC corrected: NotSeen goes; the node boots, and its selector takes none of its disks.
  await q.put('site.yaml', node(MAC1, '[{ all: true, minSize: 100TB }]'));
  await waitFor('NotSeen cleared over SSE', () => specs('specs.pending.cleared', 'NotSeen')[0]);
  const empty = await waitFor('SelectorMatchesNothing over SSE', () => specs('specs.pending', 'SelectorMatchesNothing')[0], 60_000);
  const nodeId = (await q.nodeOf(1)).id;
  t.like(empty.payload, { name: 'storage-1', id: nodeId, severity: 'warning' });
  t.regex(empty.payload.message as string, /^no disk of \S+ matches osds\/0 \{ all: true, minSize: 100TB \} \(\d+ disk\(s\) reported\)/);
  t.is(specs('specs.pending', 'NotSeen').length, 1, 'NotSeen was said once, whatever the re-applies since');
  const blocking = (await c.get<FileConvergence[]>('/specs/status')).json.find((f) => f.file === 'site.yaml')!.blocking;
  t.like(
    blocking.find((b) => b.reason === 'SelectorMatchesNothing'),
    { kind: 'Node', id: nodeId, name: 'storage-1' },
  );

  // A broken file, then fixed with a selector that takes disks: it says it applies again, and
  // the empty selector's entry goes.
  await q.put('site.yaml', 'kind: [');
  await waitFor('specs.failed over SSE', () => specs('specs.failed')[0]);
  await q.put('site.yaml', node(MAC1, '[{ all: true }]'));
  const recovered = await waitFor('specs.recovered over SSE', () => specs('specs.recovered')[0]);
  t.regex((recovered.payload.error as { message: string }).message, /^site\.yaml: 1 error\(s\); nothing was changed/);
  t.truthy(recovered.payload.failedSince);
  await waitFor('SelectorMatchesNothing cleared over SSE', () => specs('specs.pending.cleared', 'SelectorMatchesNothing')[0]);
  t.is(specs('specs.recovered').length, 1);
});
