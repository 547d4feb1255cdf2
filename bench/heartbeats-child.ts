// The controller of the heartbeats benchmark, in its own process so that its CPU time is its
// own: a whole Quarry (the lab driver with no lab machines, the embedded store, its loops
// running) holding N approved nodes, each with 4 disks and an agent credential already rotated,
// as a fleet that was installed earlier has them. The credentials are written to the store
// directly (what AgentCredentials.rotate leaves: only the SHA-256 of the secret), which skips
// the install boot of 10,000 machines but not a single step of the agent protocol measured:
// the agents log in with `agent:<nodeId>` and their secret over HTTP, as a real agent does.
// Messages (IPC): {cmd:'idle'} answers once every loop is idle; {cmd:'profile-start'} and
// {cmd:'profile-stop', file} take a V8 CPU profile of the controller between them (the load
// window only, not the population of the store); a file ending in .heapprofile takes a sampling
// profile of what was allocated instead, garbage included (where the collections' work comes
// from, which a profile of live objects would not show).
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchConfig } from './quarry-fixture.js';
import { agentUsername } from '../src/fleet/credentials.js';
import { newNodeSpec } from '../src/fleet/discovery.js';
import { silentLogger } from '../src/log.js';
import { startQuarry, type Quarry } from '../src/main.js';
import { diskIdFor } from '../src/model/ids.js';
import { Kind, type AgentCredentialSpec } from '../src/model/kinds.js';
import { benchAgent, BENCH_ADMIN_PASSWORD, agentSecret } from './heartbeats-fleet.js';

const n = Number(process.argv[2] ?? 10_000);
/** The etcd endpoints when the run is on etcd (heartbeats.ts starts one), else the embedded store. */
const etcdEndpoints = process.argv[3] ?? '';

async function populate(q: Quarry): Promise<void> {
  const now = new Date().toISOString();
  const CHUNK = 500;
  for (let start = 1; start <= n; start += CHUNK) {
    const writes: Promise<unknown>[] = [];
    for (let i = start; i < Math.min(n + 1, start + CHUNK); i++) {
      const a = benchAgent(i);
      const r = a.report;
      writes.push(
        q.store.create({
          kind: Kind.Node,
          id: a.nodeId,
          name: r.hostname,
          spec: newNodeSpec(a.mac, r.hostname, true),
          status: {},
        }),
      );
      for (const d of r.disks) {
        writes.push(
          q.store.create({
            kind: Kind.Disk,
            id: diskIdFor(a.nodeId, d.serial),
            name: `${r.hostname}/${d.serial}`,
            spec: { nodeId: a.nodeId, serial: d.serial, osd: false, wipeGeneration: 0 },
            status: {},
          }),
        );
      }
      const hash = createHash('sha256').update(agentSecret(i), 'utf8').digest('hex');
      const spec: AgentCredentialSpec = {
        nodeId: a.nodeId,
        secretHash: hash,
        initialSecret: null,
        issuedAt: now,
        firstUsedAt: now,
        rotatedAt: now,
        boundAddress: null,
        expiresAt: null,
        claimedBy: null,
        installHash: null,
        conflict: null,
      };
      writes.push(q.store.create<AgentCredentialSpec>({ kind: Kind.AgentCredential, id: a.nodeId, name: agentUsername(a.nodeId), spec }));
    }
    await Promise.all(writes);
  }
}

const stateDir = await mkdtemp(join(tmpdir(), 'quarry-bench-hb-'));
const config = benchConfig(
  stateDir,
  BENCH_ADMIN_PASSWORD,
  // A longer leader lease than the 2 s default: on a 2-core machine this loaded, a renewal late by
  // 2 s would depose the only controller mid-run (and the run would measure nothing).
  etcdEndpoints ? { STORE: 'etcd', ETCD_ENDPOINTS: etcdEndpoints, ETCD_PREFIX: `bench-hb-${randomUUID()}/`, LEADER_LEASE_TTL_S: '15' } : {},
);
const q = await startQuarry({
  config,
  log: silentLogger,
  print: () => {},
  auth: { scrypt: { N: 2 ** 14, r: 8, p: 1 } },
  onDeposed: (why) => {
    process.stderr.write(`heartbeats bench: the controller lost its leadership (${why}); the run measures nothing\n`);
    process.exit(1);
  },
});
// Alone on its etcd, it leads as soon as it campaigned.
while (!q.manager.running()) await new Promise((r) => setTimeout(r, 50));
await populate(q);
await q.manager.idle();
let profiler: Session | null = null;
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();
// The major collections since the mark: how often they come is what the promotion rate sets, and
// each one's marking is what a slow GET under load fell on (the README's heartbeats row).
const majors = { count: 0, longestPauseMs: 0, heapAfterMiB: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if ((e as { detail?: { kind?: number } }).detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
    majors.count++;
    majors.longestPauseMs = Math.max(majors.longestPauseMs, e.duration);
    // Read when the observer runs, just after the collection: what it left, and a little since.
    majors.heapAfterMiB = getHeapStatistics().used_heap_size / 2 ** 20;
  }
}).observe({ entryTypes: ['gc'] });
process.on('message', (msg: { cmd?: string; file?: string }) => {
  if (msg.cmd === 'mark') {
    delay.reset();
    Object.assign(majors, { count: 0, longestPauseMs: 0, heapAfterMiB: 0 });
  }
  if (msg.cmd === 'delay') process.send?.({ kind: 'delay', maxMs: delay.max / 1e6, majors });
  if (msg.cmd === 'idle') void q.manager.idle().then(() => process.send?.({ kind: 'idle' }));
  const heap = msg.file?.endsWith('.heapprofile') ?? false;
  if (msg.cmd === 'profile-start') {
    const session = new Session();
    profiler = session;
    session.connect();
    const started = heap
      ? session.post('HeapProfiler.startSampling', {
          samplingInterval: 32_768,
          includeObjectsCollectedByMajorGC: true,
          includeObjectsCollectedByMinorGC: true,
        })
      : session.post('Profiler.enable').then(() => session.post('Profiler.start'));
    void started.then(() => process.send?.({ kind: 'profiling' }));
  }
  if (msg.cmd === 'profile-stop' && profiler && msg.file) {
    const [session, file] = [profiler, msg.file];
    const stopped = heap ? session.post('HeapProfiler.stopSampling') : session.post('Profiler.stop');
    void stopped
      .then(({ profile }) => writeFile(file, JSON.stringify(profile)))
      .finally(() => {
        session.disconnect();
        process.send?.({ kind: 'profiled' });
      });
  }
});
process.on('disconnect', () => {
  // A clean exit, so that --cpu-prof writes its profile.
  void q
    .stop()
    .then(() => rm(stateDir, { recursive: true, force: true }))
    .finally(() => process.exit(0));
});
process.send?.({ kind: 'ready', url: q.url });
