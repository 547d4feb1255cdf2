// `npm run bench -- system` (root, the Ceph packages): the time from the first API call to
// HEALTH_OK with every PG active+clean, for a real three-node cluster that Quarry brings up
// through its API (the system test's bring-up: 3 monitors, a manager, 3 OSDs on loop devices,
// 2 MDS, a filesystem, a gateway, an RGW user; pools of size 3 across three CRUSH hosts), against
// the mini-cluster script's own bring-up of the same kinds of daemons on this machine in the same run
// (ceph-mini-cluster.sh up: 1 monitor, 1 manager, 3 OSDs on loop devices, 1 MDS, a filesystem,
// a gateway, an RGW user; pools of size 1 on one host), in alternating rounds. The script is
// the baseline and is not part of Quarry (docs/real-components.md, "The mini-cluster script"):
// it is run from CEPH_MINI_CLUSTER, by default the path where the CI machines keep a copy;
// where it is absent, only Quarry's time is shown. Then, on the last round's cluster, day 2
// (system-day2.ts): a real OSD removal and a real replacement, each timed (BENCH_SYSTEM_DAY2=0:
// not).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bringUp, waitNodesReady } from '../test/system/cluster-bringup.js';
import { NetnsCluster } from '../test/system/netns-cluster.js';
import { TAG } from '../test/system/netns.js';
import { freePortWindow } from '../test/system/node-sandbox.js';
import { systemDay2, type SystemDay2 } from './system-day2.js';

const SCRIPT = process.env.CEPH_MINI_CLUSTER ?? '/work/shared/recipes/ceph-mini-cluster.sh';
const ROUNDS = Number(process.env.BENCH_SYSTEM_ROUNDS ?? 3);
/** The Ceph loops' poll interval (production default 10 s; 1 s costs more CPU than it saves here). */
const POLL_MS = Number(process.env.BENCH_SYSTEM_POLL_MS ?? 3_000);
const TARGET = 1.25;
const DAY2 = process.env.BENCH_SYSTEM_DAY2 !== '0';

async function quarry(day2: boolean): Promise<{ ms: number; day2: SystemDay2 | null }> {
  const c = await NetnsCluster.start({ nodes: 3, disksPerNode: 2, pollMs: POLL_MS });
  try {
    const ms = (await bringUp(c, await waitNodesReady(c, 2))).healthyAfterMs;
    return { ms, day2: day2 ? await systemDay2(c, c.nodes.length) : null };
  } finally {
    await c.stop();
  }
}

function sh(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [SCRIPT, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

/** The script's whole `up`, from its start to its own HEALTH_OK wait ending (wall clock). */
async function script(): Promise<number> {
  const parent = await mkdtemp(join(tmpdir(), `${TAG}mini-`));
  const base = join(parent, 'cluster'); // the script makes it, and refuses one that exists
  const port = await freePortWindow();
  const env = { NUM_OSDS: '3', OSD_BACKEND: 'loop', OSD_SIZE_GB: '6', FUSE_TEST: '0', CLEANUP_ON_FAIL: '1', KILL_FAST: '1' };
  try {
    const started = performance.now();
    const up = await sh(['up', base, String(port)], env);
    const ms = performance.now() - started;
    if (up.code !== 0 || !/HEALTH_OK/.test(up.out)) throw new Error(`the recipe script's up failed (${up.code}):\n${up.out.slice(-2000)}`);
    return ms;
  } finally {
    await sh(['down', base, String(port)], env);
    await rm(parent, { recursive: true, force: true });
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

export async function run(): Promise<void> {
  if (process.getuid?.() !== 0) {
    console.log('skipped: needs root (network namespaces, loop devices) and the Ceph packages');
    return;
  }
  const baseline = existsSync(SCRIPT);
  if (!baseline) console.log(`(no baseline: ${SCRIPT} is not here; set CEPH_MINI_CLUSTER to the recipe script)`);
  const ours: number[] = [];
  const theirs: number[] = [];
  let day2: SystemDay2 | null = null;
  for (let i = 0; i < ROUNDS; i++) {
    if (baseline) theirs.push(await script());
    const r = await quarry(DAY2 && i === ROUNDS - 1);
    ours.push(r.ms);
    day2 ??= r.day2;
    console.log(`round ${i + 1}: Quarry ${s(ours.at(-1)!)}${baseline ? `, script ${s(theirs.at(-1)!)}` : ''}`);
  }
  if (day2) printDay2(day2);
  console.log(
    `Quarry (Ceph loops polling every ${POLL_MS / 1000} s), 3 nodes through the API, first call → HEALTH_OK: median ${s(median(ours))} (${ours.map(s).join(', ')})`,
  );
  if (!baseline) return;
  const ratio = median(ours) / median(theirs);
  console.log(`recipe script, one host, up → HEALTH_OK: median ${s(median(theirs))} (${theirs.map(s).join(', ')})`);
  console.log(`ratio ${ratio.toFixed(2)}× (target ≤ ${TARGET}×: ${ratio <= TARGET ? 'met' : 'NOT met'})`);
}

function printDay2(d: SystemDay2): void {
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  console.log(
    `day 2 on the last round's cluster (a second OSD per node: 6 OSDs; ${d.objects} objects of ${mib(d.objectBytes)} written with rados into a size-3 pool):`,
  );
  const drain = d.drained ? `; the drain started from ${d.drained.pgs} PGs, ${mib(d.drained.bytes)}` : '';
  console.log(`  removal (ceph.remove-osd → removed): ${s(d.removalMs)}; HEALTH_OK again after ${s(d.removalHealthyMs)}${drain}`);
  console.log(`    phases: ${d.removalPhases}`);
  console.log(
    `  replacement (ceph.replace-osd, and ceph.create-osd on a new disk of that node → the new disk running ${d.sameId ? 'the same' : 'ANOTHER'} OSD id): ${s(d.replacementMs)}; HEALTH_OK again after ${s(d.replacementHealthyMs)}`,
  );
  console.log(`    old disk's phases: ${d.replacementPhases}`);
  if (d.replacementFailure) console.log(`  the replacement did NOT finish: ${d.replacementFailure}`);
  console.log(`  every object read back identical: ${d.objectsIdentical ? 'yes' : 'NO'}`);
}
