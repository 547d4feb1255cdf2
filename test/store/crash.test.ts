// Kills a writing process with SIGKILL at a random moment and checks that every write it saw
// acknowledged is there after reopening, also when the kill lands in a compaction.
import test from 'ava';
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { AuditKind, type AuditEntrySpec } from '../../src/model/audit-kinds.js';
import { openEmbeddedStore } from '../../src/store/index.js';
import { tempDir } from './helpers.js';

const child = fileURLToPath(new URL('./crash-child.js', import.meta.url));

/** Runs the child until SIGKILL and returns the last acknowledged value per id. */
async function writeUntilKilled(dir: string, compactAfterBytes: number, auditMaxEntries?: number): Promise<Map<string, number>> {
  const args = [child, dir, String(compactAfterBytes), ...(auditMaxEntries ? [String(auditMaxEntries)] : [])];
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let timer: NodeJS.Timeout | undefined;
  proc.stdout.setEncoding('utf8');
  proc.stdout.on('data', (chunk: string) => {
    out += chunk;
    // The clock starts at the first acknowledged write: on a loaded machine the child may take
    // longer than the whole kill window just to open the store.
    if (!timer && out.includes('\nack ')) timer = setTimeout(() => proc.kill('SIGKILL'), 50 + Math.random() * 350);
  });
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => proc.on('exit', (_code, sig) => resolve(sig)));
  if (signal !== 'SIGKILL') throw new Error(`child ended on its own (${signal}): ${out.slice(-500)}`);
  const acked = new Map<string, number>();
  // A line cut off by the kill has no newline and is ignored.
  for (const line of out.split('\n').slice(0, -1)) {
    const [word, id, value] = line.split(' ');
    if (word === 'ack' && id && value) acked.set(id, Number(value));
  }
  return acked;
}

for (const [label, compactAfterBytes] of [
  ['without compaction', 64 * 1024 * 1024],
  ['with compactions', 16 * 1024],
] as const) {
  test(`embedded store keeps every acknowledged write through SIGKILL ${label}`, async (t) => {
    t.timeout(60_000);
    for (let round = 0; round < 5; round++) {
      const dir = await tempDir(t);
      const acked = await writeUntilKilled(dir, compactAfterBytes);
      t.true(acked.size > 0, 'the child acknowledged some writes before the kill');
      const store = await openEmbeddedStore(dir, { compactAfterBytes });
      try {
        for (const [id, value] of acked) {
          const doc = await store.get<{ restartGeneration: number }>('Node', id);
          t.truthy(doc, `${id} acknowledged but missing`);
          t.true((doc?.spec.restartGeneration ?? -1) >= value, `${id}: acknowledged ${value}, found ${doc?.spec.restartGeneration}`);
        }
        const probe = await store.create({ kind: 'Node', id: 'probe', name: 'probe', spec: (await store.list('Node'))[0]?.spec ?? {} });
        t.is(probe.metadata.resourceVersion, store.revision());
      } finally {
        await store.close();
      }
      if (compactAfterBytes < 1024 * 1024) t.log(`round ${round}: ${acked.size} docs, files ${(await readdir(dir)).join(' ')}`);
    }
  });
}

test('embedded store keeps the audit entry of every acknowledged write through SIGKILL, and none of a write that is not there', async (t) => {
  t.timeout(60_000);
  for (let round = 0; round < 3; round++) {
    const dir = await tempDir(t);
    const acked = await writeUntilKilled(dir, 16 * 1024, 1_000_000);
    t.true(acked.size > 0, 'the child acknowledged some writes before the kill');
    const store = await openEmbeddedStore(dir, { auditMaxEntries: 1_000_000 });
    try {
      const entries = (await store.list<AuditEntrySpec>(AuditKind.AuditEntry)).map((d) => d.spec);
      const recorded = new Set(entries.map((e) => `${e.objectId}@${e.generationAfter}`));
      // restartGeneration g is generation g + 1 (the create is generation 1, with 0).
      for (const [id, value] of acked)
        for (let g = 0; g <= value; g++) t.true(recorded.has(`${id}@${g + 1}`), `${id}: generation ${g + 1} acknowledged, no entry`);
      for (const e of entries) {
        const doc = await store.get('Node', e.objectId);
        t.true(
          (doc?.metadata.generation ?? 0) >= (e.generationAfter ?? 0),
          `an entry for ${e.objectId}@${e.generationAfter}, which is not there`,
        );
      }
    } finally {
      await store.close();
    }
  }
});
