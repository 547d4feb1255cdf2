// What hostile specs files cost. A "billion laughs" file (12 levels: 9^12 strings if expanded)
// against the example cluster spec, parsed and validated the same way: the bomb must be
// refused at about the cost of an ordinary file, not of its expansion. And a file at the 1 MiB
// limit of small documents: read whole, and refused at the document-count limit.
import { readFile } from 'node:fs/promises';
import { DEFAULT_LIMITS, parseSpecText, specValidators } from '../src/gitops/parse.js';
import { bomb } from '../test/gitops/fixtures.js';

const ROUNDS = 50;

function median(fn: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!;
}

export async function run(): Promise<void> {
  const v = specValidators();
  const example = await readFile(new URL('../../examples/specs/lab-cluster.yaml', import.meta.url), 'utf8');
  const hostile = bomb(12);
  if (parseSpecText('b.yaml', hostile, v).errors.length === 0) throw new Error('the bomb was not refused');
  const ordinary = median(() => parseSpecText('e.yaml', example, v));
  const refused = median(() => parseSpecText('b.yaml', hostile, v));
  console.log(
    `parse + validate, median of ${ROUNDS}: example cluster spec ${ordinary.toFixed(2)} ms, billion-laughs file refused in ${refused.toFixed(2)} ms (${(refused / ordinary).toFixed(2)}×)`,
  );
  const docs = example.split(/^---$/m);
  let big = '';
  while (Buffer.byteLength(big) < 1000 * 1024 - 4096)
    big += `${docs[docs.length - 1]!.trim()}\n---\n`.replace(/name: demo\n/g, `name: u${big.length}\n`);
  const count = big.split('---').length - 1;
  const t = performance.now();
  const r = parseSpecText('big.yaml', big, v, { maxBytes: 1024 * 1024, maxDocuments: 100_000, maxAliases: 100 });
  const all = performance.now() - t;
  const t2 = performance.now();
  const refusedBig = parseSpecText('big.yaml', big, v);
  const limited = performance.now() - t2;
  console.log(
    `a ${(Buffer.byteLength(big) / 1024).toFixed(0)} KiB file of ${count} documents: read whole ${all.toFixed(0)} ms (${r.docs.length} valid); refused at the ${DEFAULT_LIMITS.maxDocuments}-document limit in ${limited.toFixed(0)} ms (${(limited / all).toFixed(2)}×; "${refusedBig.errors[0]?.message}")`,
  );
}
