// HTTP overhead: an authenticated single-object GET (GET /users/{id}) through Quarry's whole
// stack (koa, router, cookie session check, ajv on params, store read) against a bare node:http
// server answering the same JSON. Both run on 127.0.0.1 in this process, loaded by the same
// keep-alive client, so the ratio is what Quarry's layers cost. Target: ≥ 0.4× the bare server.
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createHttpApp } from '../src/http/app.js';
import { silentLogger } from '../src/log.js';
import { createMemoryStore } from '../src/store/index.js';

export const CONCURRENCY = 64;
const DURATION_MS = 3000;
const MAX_REQUESTS = 1_000_000;
const ROUNDS = 3;

export interface Target {
  port: number;
  path: string;
  headers: Record<string, string>;
}

function once(agent: Agent, t: Target): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: t.port, path: t.path, headers: t.headers, agent }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
      res.resume();
      res.on('end', resolve);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Requests done with CONCURRENCY in flight, for durationMs or until MAX_REQUESTS. */
export async function load(t: Target, durationMs: number): Promise<{ requests: number; seconds: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  let done = 0;
  const start = performance.now();
  const deadline = start + durationMs;
  const worker = async () => {
    while (performance.now() < deadline && done < MAX_REQUESTS) {
      await once(agent, t);
      done++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  agent.destroy();
  return { requests: done, seconds: (performance.now() - start) / 1000 };
}

/** Alternating rounds, so drift (CPU frequency, other load) hits both sides alike. */
export async function compare(a: Target, b: Target): Promise<[number, number]> {
  const sum = [
    { requests: 0, seconds: 0 },
    { requests: 0, seconds: 0 },
  ];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, t] of [a, b].entries()) {
      const r = await load(t, DURATION_MS / ROUNDS);
      sum[i]!.requests += r.requests;
      sum[i]!.seconds += r.seconds;
    }
  }
  return [sum[0]!.requests / sum[0]!.seconds, sum[1]!.requests / sum[1]!.seconds];
}

export function bareServer(json: string): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json) });
    res.end(json);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function quarry(stateDir: string) {
  const store = await createMemoryStore();
  const http = await createHttpApp({
    store,
    logger: silentLogger,
    config: { stateDir, adminPassword: 'bench-password-1' },
    print: () => {},
  });
  const listening = await http.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${listening.port}`;
  const login = await fetch(`${base}/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'bench-password-1' }),
  });
  const user = (await login.json()) as { id: string };
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const target: Target = { port: listening.port, path: `/users/${user.id}`, headers: { cookie } };
  const body = await (await fetch(`${base}${target.path}`, { headers: { cookie } })).text();
  return {
    target,
    body,
    close: async () => {
      await listening.close();
      await store.close();
    },
  };
}

export async function run(): Promise<void> {
  const stateDir = await mkdtemp(join(tmpdir(), 'quarry-bench-http-'));
  const q = await quarry(stateDir);
  const bare = await bareServer(q.body);
  // The same request (cookies included) to both: only the server side differs.
  const bareTarget: Target = { ...q.target, port: (bare.address() as AddressInfo).port };
  try {
    await load(bareTarget, 500); // warm-up: JIT, sockets
    await load(q.target, 500);
    const [bareRps, quarryRps] = await compare(bareTarget, q.target);
    const ratio = quarryRps / bareRps;
    console.log(`GET /users/{id}, ${CONCURRENCY} concurrent, keep-alive, ${DURATION_MS / 1000} s each in ${ROUNDS} alternating rounds`);
    console.log(`  bare node:http  ${bareRps.toFixed(0).padStart(8)} req/s`);
    console.log(`  quarry          ${quarryRps.toFixed(0).padStart(8)} req/s`);
    console.log(`  ratio           ${ratio.toFixed(2)}× (target ≥ 0.40×) ${ratio >= 0.4 ? 'ok' : 'BELOW TARGET'}`);
  } finally {
    bare.close();
    await q.close();
    await rm(stateDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
