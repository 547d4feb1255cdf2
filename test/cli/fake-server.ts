// A stand-in Quarry for the CLI's unit tests: answers from a table of routes and records every
// request (method, path, headers, body).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Reply {
  status?: number;
  json?: unknown;
  headers?: Record<string, string | string[]>;
}

export type Routes = Record<string, (req: Seen) => Reply>;

export async function fakeServer(routes: Routes): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
      seen.push(s);
      const handler = routes[`${s.method} ${s.path.split('?')[0]}`];
      const r: Reply = handler
        ? handler(s)
        : { status: 404, json: { title: 'Not Found', status: 404, code: 'NOT_FOUND', detail: `no route ${s.path}` } };
      const status = r.status ?? 200;
      const type = status >= 400 ? 'application/problem+json' : 'application/json';
      res.writeHead(status, { 'content-type': type, ...r.headers });
      res.end(r.json === undefined ? '' : JSON.stringify(r.json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
