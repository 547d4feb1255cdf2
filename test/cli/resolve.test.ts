import test from 'ava';
import { CliError } from '../../src/cli/errors.js';
import { matchDisk, matchNode, matchQuestion, matchRun } from '../../src/cli/resolve.js';
import type { DiskView, NicView, NodeView, QuestionView, RunView } from '../../src/cli/views.js';

const node = (id: string, hostname: string, name?: string): NodeView => ({
  id,
  hostname,
  ...(name ? { name } : {}),
  role: 'worker',
  ip: '',
  status: 'active',
  diskCount: 0,
  osdCount: 0,
  createdAt: '',
});
const nodes = [
  node('4a1d37ee-2216-5697-b88f-bc9995bc90f5', 'node-1', 'storage-1'),
  node('4a1d99aa-0000-4000-8000-000000000000', 'node-2', 'storage-2'),
  node('f09a900d-f3c9-5239-b0d8-fb7bf5676e3a', 'node-3'),
];
const nics: NicView[] = [{ nodeId: nodes[2]!.id, nodeHostname: 'node-3', name: 'eno1', mac: '52:54:00:00:00:03' }];
const disk = (id: string, n: NodeView, devicePath: string, serial: string): DiskView => ({
  id,
  nodeId: n.id,
  nodeHostname: n.hostname,
  devicePath,
  serial,
  isOsd: false,
  isMon: false,
  osdId: null,
  eligible: true,
  reasons: [],
});
const disks = [
  disk('11111111-0000-4000-8000-000000000001', nodes[0]!, '/dev/sdb', 'SER-A'),
  disk('22222222-0000-4000-8000-000000000002', nodes[1]!, '/dev/sdb', 'SER-B'),
  disk('33333333-0000-4000-8000-000000000003', nodes[1]!, '/dev/sdc', 'SER-C'),
];

test('cli names a node by hostname, YAML name, MAC, id or id prefix', (t) => {
  t.is(matchNode('node-1', nodes).id, nodes[0]!.id);
  t.is(matchNode('storage-2', nodes).id, nodes[1]!.id);
  t.is(matchNode('52:54:00:00:00:03', nodes, nics).id, nodes[2]!.id);
  t.is(matchNode('f09a900d', nodes).id, nodes[2]!.id);
  t.is(matchNode(nodes[0]!.id, nodes).hostname, 'node-1');
});

test('cli an unknown or ambiguous node name is an error listing the candidates', (t) => {
  t.throws(() => matchNode('node-9', nodes), {
    instanceOf: CliError,
    message: 'no node named node-9; known: node-1 (storage-1), node-2 (storage-2), node-3',
  });
  t.throws(() => matchNode('4a1d', nodes), {
    instanceOf: CliError,
    message: '4a1d names 2 nodes: node-1 (storage-1), node-2 (storage-2); say which',
  });
  t.throws(() => matchNode('abc', nodes), { message: /^no node named abc/ }, 'a prefix of under 4 characters is no prefix');
});

test('cli names a disk by serial, node:/dev/path, hostname/serial or id prefix', (t) => {
  t.is(matchDisk('SER-C', disks).id, disks[2]!.id);
  t.is(matchDisk('node-2:/dev/sdb', disks, nodes).id, disks[1]!.id);
  t.is(matchDisk('storage-1:/dev/sdb', disks, nodes).id, disks[0]!.id);
  t.is(matchDisk('node-2/SER-B', disks).id, disks[1]!.id);
  t.is(matchDisk('3333', disks).id, disks[2]!.id);
  t.is(matchDisk('/dev/sdc', disks).id, disks[2]!.id);
  t.throws(() => matchDisk('/dev/sdb', disks), {
    message: '/dev/sdb names 2 disks: node-1:/dev/sdb (SER-A), node-2:/dev/sdb (SER-B); say which',
  });
  t.throws(() => matchDisk('node-1:/dev/sdz', disks, nodes), { message: /^no disk named node-1:\/dev\/sdz; known: / });
});

test('cli names a run by id prefix, and a question by its id or its run', (t) => {
  const runs = [
    { id: 'aaaa1111-0000-4000-8000-000000000000', taskName: 'disk.wipe' },
    { id: 'aaaa2222-0000-4000-8000-000000000000', taskName: 'node.restart' },
  ] as RunView[];
  t.is(matchRun('aaaa1', runs).taskName, 'disk.wipe');
  t.throws(() => matchRun('aaaa', runs), { message: 'aaaa names 2 runs: aaaa1111 disk.wipe, aaaa2222 node.restart; say which' });
  const qs = [
    {
      id: 'bbbb0000-0000-4000-8000-000000000000',
      runId: runs[0]!.id,
      taskName: 'disk.wipe.confirm',
      prompt: 'Wipe?',
      options: ['yes', 'no'],
      createdAt: '',
    },
  ] as QuestionView[];
  t.is(matchQuestion('bbbb', qs).id, qs[0]!.id);
  t.is(matchQuestion('aaaa1111', qs).id, qs[0]!.id);
  t.throws(() => matchQuestion('cccc', qs), { message: /^no pending question named cccc; known: bbbb0000 \(disk.wipe.confirm: Wipe\?\)$/ });
});
