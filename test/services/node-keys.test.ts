// Least privilege for keys, as a table: which node is handed which key, and when.
import test from 'ava';
import { nodeMayHold, type NodeKeyView } from '../../src/services/node-keys.js';

const ME = '11111111-1111-4111-8111-111111111111';
const OTHER = '22222222-2222-4222-8222-222222222222';
const DISK = '33333333-3333-4333-8333-333333333333';

function node(over: { mon?: boolean; mgr?: boolean; monRunning?: boolean; admin?: boolean } = {}): NodeKeyView {
  return {
    id: ME,
    spec: {
      daemons: { ...(over.mon ? { mon: { diskId: DISK } } : {}), ...(over.mgr ? { mgr: {} } : {}) },
      ...(over.admin === undefined ? {} : { adminKeyring: over.admin }),
    },
    status: { daemons: { mon: over.monRunning ?? false, mgr: false, mds: false, rgw: false, osds: [] } },
  };
}

const mon = { entity: 'mon.', nodeId: null };
const admin = { entity: 'client.admin', nodeId: null };
const key = (entity: string, nodeId: string | null = ME) => ({ entity, nodeId });

const table: Array<[string, NodeKeyView, { entity: string; nodeId: string | null }, boolean, boolean]> = [
  ['a node with a monitor merely wanted gets no mon.', node({ mon: true }), mon, false, false],
  ['a node whose monitor is being created gets mon.', node({ mon: true }), mon, true, true],
  ['a node whose monitor runs gets mon.', node({ mon: true, monRunning: true }), mon, false, true],
  ['a node that wants no monitor gets no mon., even with a run', node(), mon, true, false],
  ['a node whose monitor runs but is no longer wanted gets no mon.', node({ monRunning: true }), mon, false, false],
  ['a monitor node never gets client.admin', node({ mon: true, monRunning: true }), admin, true, false],
  ['a node with adminKeyring false gets no client.admin', node({ admin: false }), admin, false, false],
  ['an admin node gets client.admin', node({ admin: true }), admin, false, true],
  ['a node gets its own manager key', node({ mgr: true }), key('mgr.n1'), false, true],
  ['a node gets its own OSD key', node(), key('osd.3'), false, true],
  ['a node gets its own MDS and gateway keys', node(), key('client.rgw.n1'), false, true],
  ['a node never gets another node daemon key', node({ mgr: true }), key('mgr.n2', OTHER), false, false],
  ['a node never gets another node OSD key', node(), key('osd.4', OTHER), false, false],
  [
    'no node gets a cluster-wide key other than mon. and client.admin',
    node({ mon: true, monRunning: true, admin: true }),
    key('client.bootstrap-osd', null),
    true,
    false,
  ],
];

for (const [title, n, k, monScheduled, expected] of table) {
  test(`node keys: ${title}`, (t) => {
    t.is(nodeMayHold(n, k, monScheduled), expected);
  });
}
