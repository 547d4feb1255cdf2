// The NFS gateway, added as a daemon kind through the catalogue alone (docs/catalogue.md): asked
// for through the API with the filesystem it exports, keyed with caps for that filesystem only,
// started by the lab's agent, shown in the node details, and stopped once no longer desired.
import test from 'ava';
import { Kind, type NodeSpec } from '../../src/model/kinds.js';
import { cluster } from './ceph-cluster.js';
import { waitFor } from './harness.js';

interface Detail {
  id: string;
  hostname: string;
  hasNfs: boolean;
  nfsExists: boolean;
}

test('nfs gateway is created through the API for a filesystem, runs with a key for that filesystem only, and is stopped when no longer desired', async (t) => {
  const { q, c, ids } = await cluster(t);
  t.is((await c.post('/ceph/fs', { name: 'share', metadataPool: 'share_metadata', dataPool: 'share_data' })).status, 200);
  t.is((await c.post('/ceph/mds', { nodeId: ids[1] })).status, 200);
  const node = ids[2];

  // Refused whole, nothing changed: no export, a parameter of another kind, an export that is no plain name.
  const refused = [
    [{ operation: 'ceph.create-nfs', nodeIds: [node] }, 'PARAM_REQUIRED'],
    [{ operation: 'ceph.create-mgr', nodeIds: [node], params: { export: 'share' } }, 'VALIDATION_FAILED'],
    [{ operation: 'ceph.create-nfs', nodeIds: [node], params: { export: 'share\nEXPORT {' } }, 'VALIDATION_FAILED'],
    [{ operation: 'ceph.create-nfs', nodeIds: [node], params: { export: 'share', path: '/../etc' } }, 'VALIDATION_FAILED'],
  ] as const;
  for (const [body, code] of refused) {
    const r = await c.post('/invoke/node', body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is((r.json as { code?: string }).code, code, JSON.stringify(body));
  }
  t.is((await q.store.get<NodeSpec>(Kind.Node, node))!.spec.daemons.nfs, undefined, 'a refused request changed nothing');

  const r = await c.post('/invoke/node', { operation: 'ceph.create-nfs', nodeIds: [node], params: { export: 'share', path: '/' } });
  t.deepEqual(r.json, { results: [{ id: node, status: 'scheduled' }] }, r.text);
  t.deepEqual((await q.store.get<NodeSpec>(Kind.Node, node))!.spec.daemons.nfs, { export: 'share', path: '/' });

  const shown = await waitFor(
    'nfs gateway running in the node details',
    async () => {
      const d = ((await c.get('/nodes/details')).json as Detail[]).find((x) => x.id === node);
      return d?.hasNfs && d.nfsExists ? d : undefined;
    },
    30_000,
  ).catch(async (err: unknown) => {
    const n = await q.store.get<NodeSpec>(Kind.Node, node);
    t.log(
      JSON.stringify(n?.status),
      (await q.tasks.recent(1000)).filter((x) => x.spec.taskName.includes('nfs')).map((x) => [x.spec.taskName, x.status]),
    );
    throw err;
  });
  const entity = `client.nfs.${shown.hostname}`;
  t.deepEqual(q.lab!.ceph.accounts.entities.get(entity)?.caps, {
    mon: 'allow r fsname=share',
    mds: 'allow rw fsname=share',
    osd: 'allow rw tag cephfs data=share',
  });
  t.true(q.lab!.ceph.processes.get(`nfs.${shown.hostname}`)?.running);
  // The agent may report the gateway running a moment before its run is recorded completed.
  const completed = async (taskName: string) =>
    (await q.tasks.recent(1000)).find((x) => x.spec.taskName === taskName && x.status.state === 'completed');
  const started = await waitFor('the start run completed', () => completed('ceph.nfs.start'));
  t.like(started.spec.args, { name: shown.hostname, export: 'share', path: '/' });

  // No longer desired (as a spec file saying `state: absent` would make it): stopped, not left running.
  await q.store.mutateSpec<NodeSpec>(Kind.Node, node, (n) => {
    const { nfs: _gone, ...daemons } = n.spec.daemons;
    return { ...n.spec, daemons };
  });
  await waitFor(
    'nfs gateway stopped',
    async () => {
      const d = ((await c.get('/nodes/details')).json as Detail[]).find((x) => x.id === node);
      return d !== undefined && !d.hasNfs && !d.nfsExists && q.lab!.ceph.processes.get(`nfs.${shown.hostname}`)?.running === false;
    },
    30_000,
  );
  await waitFor('the stop run completed', () => completed('ceph.nfs.stop'));
});
