// An authenticated GET /nodes/{nodeId} through the whole of Quarry (every area mounted, request
// metrics counted, 1,000 nodes in the embedded store) over real HTTP on loopback, against a bare
// node:http server answering the same JSON, loaded alike (bench/http.ts's client). Target:
// ≥ 0.4× the bare server, for each way of authenticating.
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { bareServer, compare, load, CONCURRENCY, type Target } from './http.js';
import { benchQuarry } from './quarry-fixture.js';

const NODES = 1_000;

export async function run(): Promise<void> {
  const b = await benchQuarry(NODES);
  const nodeId = b.nodeIds[Math.floor(NODES / 2)]!;
  const path = `/nodes/${nodeId}`;
  const port = Number(new URL(b.q.url).port);
  // One line per way of authenticating: the browser's session cookie, and a script's API token
  // (made from that session, as `quarry login` does).
  const made = await fetch(`${b.q.url}/user/tokens`, {
    method: 'POST',
    headers: { cookie: b.cookie, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', scope: 'read' }),
  });
  if (made.status !== 201) throw new Error(`POST /user/tokens: ${made.status}`);
  const { token } = (await made.json()) as { token: string };
  const credentials: Array<{ name: string; headers: Record<string, string> }> = [
    { name: 'session cookie', headers: { cookie: b.cookie } },
    { name: 'Bearer token', headers: { authorization: `Bearer ${token}` } },
  ];
  try {
    console.log(`GET /nodes/{nodeId} (${NODES.toLocaleString('en')} nodes), ${CONCURRENCY} concurrent, keep-alive, alternating rounds`);
    for (const c of credentials) {
      const target: Target = { port, path, headers: c.headers };
      const res = await fetch(`${b.q.url}${path}`, { headers: c.headers });
      if (res.status !== 200) throw new Error(`${c.name}: ${res.status}`);
      const body = await res.text();
      const bare = await bareServer(body);
      // The same request, credentials included, to both: only the server side differs.
      const bareTarget: Target = { ...target, port: (bare.address() as AddressInfo).port };
      try {
        await load(bareTarget, 500); // warm-up: JIT, sockets
        await load(target, 500);
        const [bareRps, quarryRps] = await compare(bareTarget, target);
        const ratio = quarryRps / bareRps;
        console.log(
          `  ${c.name.padEnd(16)} quarry ${quarryRps.toFixed(0).padStart(7)} req/s, bare ${bareRps.toFixed(0).padStart(7)} req/s (${body.length} bytes): ${ratio.toFixed(2)}× (target ≥ 0.40×) ${ratio >= 0.4 ? 'ok' : 'BELOW TARGET'}`,
        );
      } finally {
        bare.close();
      }
    }
  } finally {
    await b.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
