import test from 'ava';
import type { AnyDoc } from '../../src/model/document.js';
import { checkDependencies, describeLoops, keysForDoc, loopsFor, parseKey, type AnyReconciler } from '../../src/runtime/routing.js';
import { done, type WatchMapping } from '../../src/runtime/types.js';

function loop(name: string, kind: string, extra: { watches?: WatchMapping[]; dependsOn?: string[] } = {}): AnyReconciler {
  return {
    name,
    kind,
    ...extra,
    observe: async () => undefined,
    plan: () => undefined,
    apply: async () => done(),
  };
}

function doc(kind: string, id: string, spec: unknown = {}): AnyDoc {
  const metadata = { generation: 1, resourceVersion: 1, createdAt: '', updatedAt: '', labels: {}, source: null };
  return { kind, id, name: id, metadata, spec, status: {} };
}

const loops = [
  loop('node', 'Node'),
  loop('disk', 'Disk', { watches: [{ kind: 'Node', map: (d) => [`disks-of-${d.id}`] }] }),
  loop('osd', 'Disk', { dependsOn: ['node'] }),
];

test('keysForDoc wakes own loops, watchers and the target of a task run', (t) => {
  const table: Array<[AnyDoc, string[]]> = [
    [doc('Node', 'n1'), ['node/n1', 'disk/disks-of-n1']],
    [doc('Disk', 'd1'), ['disk/d1', 'osd/d1']],
    [doc('TaskRun', 'r1', { targetKind: 'Disk', targetId: 'd7' }), ['disk/d7', 'osd/d7']],
    [doc('TaskRun', 'r2', { targetKind: 7 }), []],
    [doc('Image', 'i1'), []],
  ];
  for (const [d, expected] of table) {
    t.deepEqual(keysForDoc(loops, d, () => t.fail()).sort(), expected.sort(), `${d.kind}/${d.id}`);
  }
});

test('keysForDoc reports a throwing watch mapping and keeps the other keys', (t) => {
  const bad = loop('bad', 'Disk', {
    watches: [
      {
        kind: 'Node',
        map: () => {
          throw new Error('nope');
        },
      },
    ],
  });
  const failed: string[] = [];
  const keys = keysForDoc([...loops, bad], doc('Node', 'n1'), (name) => failed.push(name));
  t.deepEqual(failed, ['bad']);
  t.deepEqual(keys.sort(), ['disk/disks-of-n1', 'node/n1']);
});

test('parseKey splits at the first slash and rejects malformed keys', (t) => {
  t.deepEqual(parseKey('node/a/b'), { loop: 'node', id: 'a/b' });
  t.is(parseKey('node'), undefined);
  t.is(parseKey('/x'), undefined);
  t.is(parseKey('node/'), undefined);
});

test('checkDependencies names an unknown dependency', (t) => {
  const err = t.throws(() => checkDependencies([loop('mon', 'Node', { dependsOn: ['network'] })]));
  t.regex(err.message, /loop "mon" depends on "network", which is not registered/);
});

test('checkDependencies rejects a cycle and accepts a DAG', (t) => {
  t.notThrows(() => checkDependencies(loops));
  const err = t.throws(() => checkDependencies([loop('a', 'X', { dependsOn: ['b'] }), loop('b', 'X', { dependsOn: ['a'] })]));
  t.regex(err.message, /cycle: a → b → a/);
});

test('describeLoops and loopsFor report kinds, watches and dependencies', (t) => {
  t.deepEqual(describeLoops(loops), [
    { name: 'node', kind: 'Node', watches: [], dependsOn: [] },
    { name: 'disk', kind: 'Disk', watches: ['Node'], dependsOn: [] },
    { name: 'osd', kind: 'Disk', watches: [], dependsOn: ['node'] },
  ]);
  t.deepEqual(loopsFor(loops, 'Node'), ['node', 'disk']);
  t.deepEqual(loopsFor(loops, 'TaskRun'), []);
});
