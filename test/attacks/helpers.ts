// Requests from another machine, as far as Quarry can tell: the client socket is bound to
// another loopback address (127.0.0.0/8 is all local on Linux), so the server sees that peer.
import { request } from 'node:http';

/** `json` is the parsed JSON body (else undefined), typed as the caller declares: `send<Shape>()`. */
export interface RawReply<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: T;
}

export interface RawOptions {
  json?: unknown;
  headers?: Record<string, string>;
  /** The client socket's own address: the source Quarry sees. */
  from?: string;
}

export function send<T = unknown>(base: string, method: string, path: string, opts: RawOptions = {}): Promise<RawReply<T>> {
  const url = new URL(path, base);
  const body = opts.json === undefined ? undefined : JSON.stringify(opts.json);
  const headers: Record<string, string> = { ...(body ? { 'content-type': 'application/json' } : {}), ...opts.headers };
  return new Promise((resolve, reject) => {
    const req = request(
      {
        hostname: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        headers,
        agent: false,
        ...(opts.from ? { localAddress: opts.from } : {}),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => {
          const json = (/json/.test(res.headers['content-type'] ?? '') && text ? JSON.parse(text) : undefined) as T;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** POST /user/login from `from`. */
export const loginFrom = <T = unknown>(
  base: string,
  from: string,
  username: string,
  password: string,
  headers?: Record<string, string>,
): Promise<RawReply<T>> => send<T>(base, 'POST', '/user/login', { from, json: { username, password }, ...(headers ? { headers } : {}) });
