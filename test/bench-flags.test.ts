import test from 'ava';
import { readFile } from 'node:fs/promises';
import { QUARRY_V8_FLAGS } from '../bench/node-flags.js';

test('bench children run with the V8 flags of the production start script', async (t) => {
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const start = /node ((?:--\S+ )*)dist\/src\/main\.js/.exec(pkg.scripts.start);
  t.truthy(start, pkg.scripts.start);
  t.deepEqual(start![1]!.trim().split(' ').filter(Boolean), QUARRY_V8_FLAGS);
});
