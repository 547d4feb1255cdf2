// A fetch whose requests leave from a chosen local address. The lab gives each simulated
// machine its own loopback address (Linux routes all of 127/8 to lo), as a real machine has its
// own DHCP lease, so the master sees each machine's real source address and enrollment's
// address binding is exercised for real. Node's global fetch cannot pick the source address
// without undici's Agent, so this speaks node:http directly and answers a standard Response.
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export type FetchLike = (url: URL | string, init?: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal }) => Promise<Response>;

const NULL_BODY = new Set([101, 204, 205, 304]);

export function boundFetch(localAddress: string): FetchLike {
  // Connections kept alive, as fetch keeps them: a machine heartbeats every few seconds, and a
  // new TCP connection per call costs the master's event loop (idle sockets are unref'd).
  const agents = { http: new HttpAgent({ keepAlive: true, localAddress }), https: new HttpsAgent({ keepAlive: true, localAddress }) };
  return (url, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const u = typeof url === 'string' ? new URL(url) : url;
      const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
      const body = init.body === undefined ? undefined : Buffer.from(init.body, 'utf8');
      const headers: Record<string, string> = { ...init.headers, ...(body ? { 'content-length': String(body.length) } : {}) };
      const req = send(
        u,
        { method: init.method ?? 'GET', headers, localAddress, agent: u.protocol === 'https:' ? agents.https : agents.http, ...(init.signal ? { signal: init.signal } : {}) },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const h = new Headers();
            for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) h.append(res.rawHeaders[i] ?? '', res.rawHeaders[i + 1] ?? '');
            const status = res.statusCode ?? 0;
            resolve(new Response(NULL_BODY.has(status) ? null : Buffer.concat(chunks), { status, headers: h }));
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}
