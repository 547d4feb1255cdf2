// Failover benchmark (#18 part 6): two controller processes on a three-member etcd; the leader
// is SIGKILLed five times (a new controller joins after each round), and each round measures
// the time from the kill to the other controller leading (GET /leaderz) and to its loops having
// reconciled a machine that network-booted after the kill. The baseline, in the same run: the
// same handover after a clean SIGTERM, where the leader resigns instead of its lease running
// out. Target: ≤ 5 s from the SIGKILL to reconciling (Kubernetes' controllers: a 15 s lease).
import { EtcdCluster, etcdMissing } from '../test/store/etcd-server.js';
import { Client } from '../test/http/client.js';
import { CONTROLLER_ADMIN_PASSWORD, ControllerGroup, type Controller, type Scope } from '../test/main/controllers.js';
import { waitFor } from '../test/helpers/wait.js';

const ROUNDS = Number(process.env.FAILOVER_ROUNDS ?? 5);
const env = { MAX_UNAPPROVED_NODES: '100000', DISCOVERY_BURST: '100000', DISCOVERY_PER_MINUTE: '100000' };

interface Round {
  leadMs: number;
  reconcileMs: number;
}

let macs = 0;
const nextMac = (): string => {
  const i = ++macs;
  return `52:54:00:be:${((i >> 8) & 0xff).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`;
};

async function oneLeader(g: ControllerGroup): Promise<Controller> {
  const [l] = await waitFor('one leader', async () => {
    const ls = await g.leaders();
    return ls.length === 1 ? ls : undefined;
  });
  return l!;
}

/** Kills the leader with `signal`; boots a new machine through the survivor until its node is
 * reconciled (the loop's AwaitingApproval condition). */
async function round(g: ControllerGroup, scope: Scope, signal: NodeJS.Signals): Promise<Round> {
  const leader = await oneLeader(g);
  const other = g.controllers.find((c) => c.running && c !== leader)!;
  const api = new Client(other.url);
  if ((await api.post('/user/login', { username: 'admin', password: CONTROLLER_ADMIN_PASSWORD })).status !== 200) throw new Error('login');
  const t0 = performance.now();
  void leader.kill(signal);
  let leadMs = 0;
  let booted: string | null = null;
  const reconcileMs = await waitFor('reconciled after the handover', async () => {
    if (!leadMs && (await other.leads())) leadMs = performance.now() - t0;
    // Boots go on during the handover; the first answered after the kill is the one waited for.
    if (!booted) {
      const res = await fetch(`${other.url}/boot/config?mac=${nextMac()}`);
      booted = /set quarry-node (\S+)/.exec(await res.text())?.[1] ?? null;
    }
    if (!booted) return undefined;
    const r = await api.get<{ id: string; ready: { reason?: string } | null }[]>('/nodes/details');
    const done = r.status === 200 && r.json.some((n) => n.id === booted && n.ready?.reason === 'AwaitingApproval');
    return done ? performance.now() - t0 : undefined;
  });
  // Two controllers again for the next round.
  await g.add(scope);
  return { leadMs, reconcileMs };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const fmt = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

export async function run(): Promise<void> {
  const missing = etcdMissing();
  if (missing) {
    console.log(`skipped: ${missing}`);
    return;
  }
  const cleanups: (() => Promise<void> | void)[] = [];
  const scope: Scope = { teardown: (fn) => void cleanups.push(fn), log: () => undefined };
  const etcd = await EtcdCluster.start(3);
  try {
    const rows: [string, Round[]][] = [];
    for (const [label, signal] of [
      ['SIGTERM (resigns; baseline)', 'SIGTERM'],
      ['SIGKILL (lease expires)', 'SIGKILL'],
    ] as const) {
      const g = await ControllerGroup.start(scope, 2, { endpoints: etcd.endpoints(), prefix: `bench-failover-${signal}/`, env });
      const rounds: Round[] = [];
      for (let i = 0; i < ROUNDS; i++) rounds.push(await round(g, scope, signal));
      rows.push([label, rounds]);
    }
    const base = median(rows[0]![1].map((r) => r.reconcileMs));
    console.log(`controllers: 2 on a 3-member etcd, LEADER_LEASE_TTL_S=2, ${ROUNDS} rounds each, medians`);
    console.log('| leader stopped by | other leads | reconciling a machine booted after | ×baseline |');
    console.log('|---|---|---|---|');
    for (const [label, rounds] of rows) {
      const rec = median(rounds.map((r) => r.reconcileMs));
      console.log(`| ${label} | ${fmt(median(rounds.map((r) => r.leadMs)))} | ${fmt(rec)} | ${(rec / base).toFixed(1)}× |`);
    }
    const kill = rows[1]![1].map((r) => r.reconcileMs);
    console.log(`SIGKILL rounds (to reconciling): ${kill.map(fmt).join(', ')}; target ≤ 5 s: ${median(kill) <= 5_000 ? 'met' : 'NOT met'}`);
  } finally {
    for (const fn of cleanups.reverse()) await fn();
    await etcd.stop();
  }
}
