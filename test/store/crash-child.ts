// Child of crash.test: writes to an embedded store until it is killed, printing each write
// only after the store acknowledged it. Usage: crash-child.js <dir> <compactAfterBytes> [auditMaxEntries]
import { openEmbeddedStore } from '../../src/store/index.js';

const [dir, compactAfter, auditMax] = process.argv.slice(2);
if (!dir) throw new Error('usage: crash-child.js <dir> [compactAfterBytes] [auditMaxEntries]');
const store = await openEmbeddedStore(dir, {
  compactAfterBytes: Number(compactAfter ?? 64 * 1024 * 1024),
  ...(auditMax ? { auditMaxEntries: Number(auditMax) } : {}),
});

const spec = (hostname: string, restartGeneration: number) => ({
  hostname,
  macs: ['52:54:00:00:00:01'],
  role: 'worker',
  image: null,
  power: 'on',
  restartGeneration,
  shutdownGeneration: 0,
  daemons: {},
});

const ack = (id: string, value: number): void => void process.stdout.write(`ack ${id} ${value}\n`);

/** Each lane creates a node, then bumps its restartGeneration a few times, and moves on. */
async function lane(n: number): Promise<never> {
  for (let i = 0; ; i++) {
    const id = `l${n}-d${i}`;
    let doc = await store.create({ kind: 'Node', id, name: id, spec: spec(`h${n}-${i}`, 0) });
    ack(id, 0);
    for (let g = 1; g <= 5; g++) {
      doc = await store.updateSpec('Node', id, spec(`h${n}-${i}`, g), { resourceVersion: doc.metadata.resourceVersion });
      ack(id, g);
    }
  }
}

process.stdout.write('ready\n');
await Promise.all([0, 1, 2, 3].map(lane));
