// Specs files as text: errors name the file, the document, the line, the column and the field;
// hostile files are refused; defaults are filled so an unchanged file reads the same.
import test from 'ava';
import { parseSpecText, specValidators } from '../../src/gitops/parse.js';
import { networkInputSchema } from '../../src/model/network-input.js';
import { specInputSchemas } from '../../src/model/spec-inputs.js';
import { filesystemInputSchema, rgwUserInputSchema } from '../../src/model/storage-input.js';
import { bomb } from './fixtures.js';

const v = specValidators();

const NET = `apiVersion: quarry/v1
kind: Network
metadata: { name: lab }
spec:
  cidr: 10.0.0.0/16
  gateway: 10.0.0.1
  nicId: 5a0d1d7e-95bb-5a3b-9c5b-7d5b6c2a8f10
`;

test('parse: one schema object per kind serves the API and the folder', (t) => {
  t.is(specInputSchemas.Network, networkInputSchema);
  t.is(specInputSchemas.Filesystem, filesystemInputSchema);
  t.is(specInputSchemas.RgwUser, rgwUserInputSchema);
});

test('parse: a good document comes back validated, with the defaults filled in', (t) => {
  const text = `apiVersion: quarry/v1
kind: Node
metadata: { name: a, labels: { rack: r1 } }
spec:
  match: { mac: "52:54:00:00:00:01" }
  daemons: { mon: {} }
  osds: [{ all: true, rotational: true, minSize: 1TB }]
`;
  const { docs, errors } = parseSpecText('n.yaml', text, v);
  t.deepEqual(errors, []);
  t.is(docs.length, 1);
  t.like(docs[0], { file: 'n.yaml', index: 0, kind: 'Node', name: 'a', labels: { rack: 'r1' }, state: 'present' });
  t.deepEqual(docs[0]!.spec, {
    match: { mac: '52:54:00:00:00:01' },
    role: 'worker',
    power: 'on',
    image: null,
    daemons: { mon: { state: 'present' } },
    osds: [{ all: true, rotational: true, minSize: '1TB', state: 'present' }],
  });
});

test('parse: errors carry file, document, line, column and field', (t) => {
  const text = `${NET}---
apiVersion: quarry/v1
kind: Network
metadata: { name: bad }
spec:
  cidr: 10.1.0.0/16
  gateway: not-an-address
  nicId: 7
---
kind: Filesystem
`;
  const { docs, errors } = parseSpecText('nets.yaml', text, v);
  t.is(docs.length, 1, 'the good document parsed; the caller refuses the file whole');
  t.deepEqual(
    errors.filter((e) => e.document === 1).map(({ line, column, field }) => ({ line, column, field })),
    [
      { line: 14, column: 12, field: '/spec/gateway' },
      { line: 15, column: 10, field: '/spec/nicId' },
    ],
  );
  const third = errors.filter((e) => e.document === 2);
  t.deepEqual(third.map((e) => e.field).sort(), ['/apiVersion', '/metadata', '/spec']);
  t.true(third.every((e) => e.file === 'nets.yaml' && e.line === 17 && e.column === 1));
});

test('parse: a YAML syntax error and a duplicate key are reported where they are', (t) => {
  const syntax = parseSpecText('s.yaml', 'apiVersion: quarry/v1\nkind: Network\nmetadata: {\n  name: a\n', v);
  t.like(syntax.errors[0], { file: 's.yaml', document: 0, line: 5, column: 1 });
  const dup = parseSpecText('d.yaml', NET.replace('  gateway: 10.0.0.1\n', '  gateway: 10.0.0.1\n  gateway: 10.0.0.2\n'), v);
  t.is(dup.docs.length, 0);
  t.like(dup.errors[0], { line: 7, document: 0 });
  t.regex(dup.errors[0]!.message, /unique/);
});

test('parse: an unknown field, kind or apiVersion is refused by name', (t) => {
  const { errors } = parseSpecText('u.yaml', NET.replace('  cidr:', '  colour: red\n  cidr:').replace('quarry/v1', 'quarry/v2'), v);
  t.deepEqual(errors.map((e) => `${e.field} ${e.message}`).sort(), ['/apiVersion must be equal to constant']);
  const again = parseSpecText('u.yaml', NET.replace('  cidr:', '  colour: red\n  cidr:'), v);
  t.deepEqual(
    again.errors.map((e) => [e.field, e.message, e.line]),
    [['/spec/colour', 'unknown field', 5]],
  );
});

test('parse: a billion-laughs file is refused on its aliases', (t) => {
  const { docs, errors } = parseSpecText('bomb.yaml', bomb(9), v);
  t.is(docs.length, 0);
  t.regex(errors[0]!.message, /alias/i);
});

test('parse: files over the size or document limit are refused whole, unread', (t) => {
  const big = parseSpecText('big.yaml', `# ${'x'.repeat(2000)}\n${NET}`, v, { maxBytes: 1000, maxDocuments: 10, maxAliases: 100 });
  t.deepEqual([big.docs.length, big.errors[0]?.message], [0, 'the file is larger than 1000 bytes']);
  const many = parseSpecText('many.yaml', Array(12).fill(NET).join('---\n'), v, { maxBytes: 1e6, maxDocuments: 10, maxAliases: 100 });
  t.deepEqual([many.docs.length, many.errors[0]?.message], [0, 'the file holds more than 10 documents']);
});

test('parse: empty documents and comments are skipped', (t) => {
  const { docs, errors } = parseSpecText('e.yaml', `# nothing\n---\n${NET}---\n`, v);
  t.deepEqual([docs.length, errors.length, docs[0]?.index], [1, 0, 0]);
});

test('parse: an NFS gateway in a spec file names the filesystem it exports; without one, or with a path that leaves it, it is refused', (t) => {
  const node = (nfs: string) => `apiVersion: quarry/v1
kind: Node
metadata: { name: a }
spec:
  match: { mac: "52:54:00:00:00:01" }
  daemons: { nfs: ${nfs} }
`;
  const ok = parseSpecText('n.yaml', node('{ export: cephfs, path: /shares }'), v);
  t.deepEqual(ok.errors, []);
  t.deepEqual((ok.docs[0]!.spec as { daemons: unknown }).daemons, { nfs: { export: 'cephfs', path: '/shares', state: 'present' } });
  for (const bad of ['{}', '{ export: cephfs, path: /a/../b }', '{ export: "x y" }']) {
    const r = parseSpecText('n.yaml', node(bad), v);
    t.is(r.docs.length, 0, bad);
    t.true(
      r.errors.some((e) => e.field.startsWith('/spec/daemons/nfs')),
      `${bad}: ${JSON.stringify(r.errors)}`,
    );
  }
});
