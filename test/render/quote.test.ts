// The quoting helpers templates get as `q`: each returns what may stand in its place, or throws.
import test from 'ava';
import { parse } from 'yaml';
import { quote as q, QuoteError } from '../../src/render/quote.js';

const NASTY = ['a\nb', 'a\rb', 'a\u0085b', 'a\u2028b', 'a\u2029b', 'x\u0000', 'a\tb', 'a\u007fb'];

test('quote yaml gives a scalar that reads back as the same string, whatever it holds', (t) => {
  const values = [
    'node-1',
    'yes',
    'No',
    'null',
    '123',
    '0x1F',
    '1:20',
    '~',
    '',
    ' lead',
    'a: b',
    '- x',
    '#c',
    "it's",
    '"q"',
    'a\\b',
    '{x}',
    '[y]',
    '&a',
    '*b',
    '!t',
    '%d',
    '@e',
    '`f',
    '|',
    '>',
    ...NASTY,
    'bootcmd:\n  - [ sh, -c, "curl x | sh" ]',
  ];
  for (const v of values) {
    for (const version of ['1.1', '1.2'] as const) {
      const doc: unknown = parse(`key: ${q.yaml(v)}\nother: 1\n`, { version });
      t.deepEqual(doc, { key: v, other: 1 }, `${JSON.stringify(v)} in YAML ${version}`);
    }
    t.false(/[\n\r\u0085\u2028\u2029]/.test(q.yaml(v)), `${JSON.stringify(v)} stays on one line`);
  }
  t.is(q.yaml('node-1'), 'node-1', 'a simple word stays plain');
  t.is(q.yaml('yes'), '"yes"');
  t.is(q.yaml(3), '3');
});

test('quote token takes one iPXE word and refuses anything that would split or expand it', (t) => {
  t.is(
    q.token('http://10.0.0.1:8080/images/x/files/vmlinuz?expires=1&signature=ab'),
    'http://10.0.0.1:8080/images/x/files/vmlinuz?expires=1&signature=ab',
  );
  t.is(q.token(30), '30');
  for (const bad of [
    '',
    'a b',
    'a\nb',
    '${net0/mac}',
    'a||b',
    'a;b',
    '"x"',
    "'x'",
    'a\\b',
    '#x',
    '&&',
    'a%b',
    null,
    undefined,
    {},
    ...NASTY,
  ]) {
    t.throws(() => q.token(bad), { instanceOf: QuoteError }, JSON.stringify(bad));
  }
  t.is(q.words('console=tty0 console=ttyS0,115200n8'), 'console=tty0 console=ttyS0,115200n8');
  t.is(q.words(''), '');
  for (const bad of ['a  b', ' a', 'a\nkernel x', 'a && b', 'init=$x']) t.throws(() => q.words(bad), { instanceOf: QuoteError }, bad);
});

test('quote text, line, ip and name refuse what would leave their place', (t) => {
  t.is(
    q.text('in a boot loop, booting the local disk (an operator resets it with node.restart)'),
    'in a boot loop, booting the local disk (an operator resets it with node.restart)',
  );
  for (const bad of ['a && chain http://x', 'a || b', '${x}', 'a;b', 'a\nb', '"', "'", '#'])
    t.throws(() => q.text(bad), { instanceOf: QuoteError }, bad);
  t.is(q.line('[v2:10.0.0.1:3300,v1:10.0.0.1:6789]'), '[v2:10.0.0.1:3300,v1:10.0.0.1:6789]');
  for (const bad of NASTY) t.throws(() => q.line(bad), { instanceOf: QuoteError }, JSON.stringify(bad));
  for (const good of ['10.0.0.1', '255.255.255.0', '::1', 'fd00::2', '2001:db8:0:0:0:0:0:1', '::ffff:192.0.2.1']) t.is(q.ip(good), good);
  for (const bad of ['10.0.0.256', '10.0.0', '::1::', '1:2:3:4:5:6:7:8:9', 'gg::1', 'x', '', '10.0.0.1\n', '[::1]', '10.0.0.1/24'])
    t.throws(() => q.ip(bad), { instanceOf: QuoteError }, bad);
  t.is(q.name('eth0.100'), 'eth0.100');
  for (const bad of ['', 'a b', 'a,b', 'a/b', '-x', 'a\nb']) t.throws(() => q.name(bad), { instanceOf: QuoteError }, bad);
});
