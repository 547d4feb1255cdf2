// The heartbeats benchmark's load generator, in its own process (the controller's CPU stays its
// own): N node agents speaking the agent protocol over HTTP. Each logs in once as
// `agent:<nodeId>` with its secret (POST /user/login), keeps its session cookies, and POSTs its
// inventory report to /node/hardware every period, the N agents' phases spread evenly over the
// period (10,000 agents at 5 s: one report every 0.5 ms, 2,000 a second). A 401 is answered as
// the agent's session does (agent-session.ts): log in again, send once more.
//
// Connections: one undici Pool of CONNECTIONS keep-alive sockets shared by all agents, not one
// socket per agent as real nodes have. 10,000 sockets from one process would cost this process
// (and the 2-core machine the controller runs on) far more than the server's side of them, and
// what the server does per request on a kept-alive socket is the same whichever agent it
// carries. What this leaves out: the kernel's and the server's cost of 10,000 mostly idle
// sockets, and that Node's default keepAliveTimeout (5 s, which Quarry keeps) equals the default
// heartbeat period, so a real agent's socket is often closed by the server just before its next
// report and each report may pay a new TCP connection.
//
// Like a real agent, one agent has at most one report in flight: a report due while the last
// is unanswered is skipped (counted), so a slow server lowers the rate rather than queueing
// without end.
import { once } from 'node:events';
import { Pool } from 'undici';
import { agentSecret, benchAgent, CONNECTIONS } from './heartbeats-fleet.js';

interface Config {
  url: string;
  n: number;
  periodMs: number;
}

interface AgentState {
  username: string;
  secret: string;
  body: string;
  cookie: string;
  busy: boolean;
}

const [cfg] = (await once(process, 'message')) as [Config];
const pool = new Pool(cfg.url, { connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 30_000 });

async function login(a: AgentState): Promise<void> {
  const res = await pool.request({
    path: '/user/login',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: a.username, password: a.secret }),
  });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`agent login: HTTP ${res.statusCode}`);
  const set = res.headers['set-cookie'];
  a.cookie = (Array.isArray(set) ? set : set ? [set] : []).map((c) => c.split(';')[0]).join('; ');
}

const agents: AgentState[] = Array.from({ length: cfg.n }, (_, k) => {
  const a = benchAgent(k + 1);
  return { username: a.username, secret: agentSecret(k + 1), body: JSON.stringify(a.report), cookie: '', busy: false };
});

// Logged in CONNECTIONS at a time.
const t0 = performance.now();
let loginErrors = 0;
let next = 0;
await Promise.all(
  Array.from({ length: CONNECTIONS }, async () => {
    while (next < agents.length) {
      const a = agents[next++]!;
      await login(a).catch(() => loginErrors++);
    }
  }),
);
process.send?.({ kind: 'ready', loginMs: performance.now() - t0, loginErrors });

// What one window saw.
let latencies: number[] = [];
let late: number[] = [];
/** When (ms into the window) the reports slower than a second were sent: one stall, or many. */
let slowAt: number[] = [];
let sent = 0;
let ok = 0;
let errors = 0;
let relogins = 0;
let skipped = 0;
let windowStart = performance.now();
let elu = performance.eventLoopUtilization();

async function beat(a: AgentState, dueAt: number): Promise<void> {
  a.busy = true;
  const start = performance.now();
  sent++;
  try {
    const post = async (): Promise<number> => {
      const res = await pool.request({
        path: '/node/hardware',
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: a.cookie },
        body: a.body,
      });
      await res.body.dump();
      return res.statusCode;
    };
    let status = await post();
    if (status === 401) {
      relogins++;
      await login(a);
      status = await post();
    }
    const end = performance.now();
    if (status === 200) {
      ok++;
      latencies.push(end - start);
      late.push(end - dueAt);
      if (end - start > 1_000) slowAt.push(start - windowStart);
    } else errors++;
  } catch {
    errors++;
  } finally {
    a.busy = false;
  }
}

let running = false;
/** Report s is agent s % n's, due at startAt + s × period / n. */
function drive(startAt: number): void {
  const gap = cfg.periodMs / cfg.n;
  let s = 0;
  const tick = (): void => {
    if (!running) return;
    const now = performance.now();
    while (startAt + s * gap <= now) {
      const a = agents[s % cfg.n]!;
      if (a.busy) skipped++;
      else void beat(a, startAt + s * gap);
      s++;
    }
    setTimeout(tick, 1);
  };
  tick();
}

const pct = (xs: number[], q: number): number => {
  const sorted = [...xs].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
};

process.on('message', (msg: { cmd?: string }) => {
  if (msg.cmd === 'start') {
    running = true;
    drive(performance.now());
  } else if (msg.cmd === 'mark') {
    latencies = [];
    late = [];
    slowAt = [];
    sent = ok = errors = relogins = skipped = 0;
    windowStart = performance.now();
    elu = performance.eventLoopUtilization();
  } else if (msg.cmd === 'report') {
    const seconds = (performance.now() - windowStart) / 1000;
    process.send?.({
      kind: 'report',
      seconds,
      sent,
      ok,
      errors,
      relogins,
      skipped,
      rate: ok / seconds,
      p50: pct(latencies, 0.5),
      p99: pct(latencies, 0.99),
      max: pct(latencies, 1),
      lateP99: pct(late, 0.99),
      elu: performance.eventLoopUtilization(elu).utilization,
      slow: slowAt.length,
      slowFrom: slowAt.length ? Math.min(...slowAt) : null,
      slowTo: slowAt.length ? Math.max(...slowAt) : null,
    });
  } else if (msg.cmd === 'stop') running = false;
});
process.on('disconnect', () => {
  running = false;
  void pool.close().finally(() => process.exit(0));
});
