// The node's ceph.conf follows the master's between steps: the heartbeat compares the hash of
// the master's part with GET /ceph/cluster/config/hash and fetches the conf again on a change.
import test from 'ava';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Agent } from '../../src/agent/agent.js';
import { silentLogger } from '../../src/log.js';
import { fakeNode, MASTER_CONF } from './helpers.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

test('agent heartbeat rewrites the node ceph.conf when the master conf changed, and leaves a node outside the cluster alone', async (t) => {
  const n = await fakeNode(t);
  const calls: string[] = [];
  const agent = new Agent({
    session: {
      call: async (method, path) => (
        calls.push(`${method} ${path}`),
        { status: 200, json: {}, bytes: Buffer.alloc(0), headers: new Headers() }
      ),
    },
    steps: new Map(),
    host: n.host,
    master: n.master,
    runner: n.runner,
    log: silentLogger,
    inventory: async () => ({ disks: [], nics: [] }),
    identity: { bootId: 'b', hostname: 'n1', ip: '10.0.0.1' },
    heartbeatMs: 1_000,
    claimWaitMs: 0,
  });
  // Never part of the cluster: no conf is written, whatever the master says.
  t.false(await agent.followConf());
  t.is(await n.host.masterConfHash(), null);

  await n.host.writeConf(MASTER_CONF);
  t.is(await n.host.masterConfHash(), sha(MASTER_CONF));
  t.false(await agent.followConf(), 'the same conf: nothing fetched');

  // A third monitor joined: the master's conf names it.
  n.master.conf = MASTER_CONF.replace('mon_host = ', 'mon_host = [v2:10.0.0.3:3300,v1:10.0.0.3:6789],');
  await agent.heartbeat();
  const local = await readFile(n.host.conf, 'utf8');
  t.true(local.startsWith(n.master.conf), "the node's conf begins with the master's, byte for byte");
  t.true(local.includes('public_addr = 10.0.0.1'), "and keeps this node's own section");
  t.is(await n.host.masterConfHash(), await n.master.configHash());
  t.deepEqual(calls, ['POST /node/hardware'], 'the report went out after the conf was brought up to date');
});

test('ceph host writes of the conf at once (steps in parallel) all land, the last one whole', async (t) => {
  const n = await fakeNode(t);
  const confs = Array.from({ length: 8 }, (_, i) => MASTER_CONF.replace('[global]\n', `[global]\n# version ${i}\n`));
  await Promise.all(confs.map((c) => n.host.writeConf(c)));
  const local = await readFile(n.host.conf, 'utf8');
  t.true(
    confs.some((c) => local.startsWith(c)),
    'one whole version',
  );
  t.is(local.split('# This node').length, 2, 'one node section');
});
