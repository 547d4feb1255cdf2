// A tiny HTTP client over global fetch with a cookie jar, enough for one host: it keeps what
// Set-Cookie says, drops expired or emptied cookies, and sends the rest back.

export interface SetCookie {
  name: string;
  value: string;
  /** Attribute names in lower case; flags map to true. */
  attrs: Record<string, string | true>;
}

export function parseSetCookie(header: string): SetCookie {
  const [pair = '', ...rest] = header.split(';');
  const eq = pair.indexOf('=');
  const attrs: Record<string, string | true> = {};
  for (const part of rest) {
    const [k = '', ...v] = part.trim().split('=');
    attrs[k.toLowerCase()] = v.length ? v.join('=') : true;
  }
  return { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), attrs };
}

/**
 * One answer. `json` is the body parsed when it is JSON (problem+json included), else undefined,
 * typed as the caller declares with `c.get<Shape>(path)` (shapes many tests read are in bodies.ts): the declaration is not checked (a test
 * reads what it expects, and its assertions are the check); undeclared, it is `unknown`.
 */
export interface Reply<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  json: T;
  setCookies: SetCookie[];
}

export interface RequestOptions {
  json?: unknown;
  body?: string | Uint8Array;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export class Client {
  readonly jar = new Map<string, string>();

  constructor(readonly base: string) {}

  /** A second client holding the same cookies now (a copy, not a share), maybe elsewhere. */
  clone(base = this.base): Client {
    const c = new Client(base);
    for (const [k, v] of this.jar) c.jar.set(k, v);
    return c;
  }

  get<T = unknown>(path: string, opts: RequestOptions = {}): Promise<Reply<T>> {
    return this.request<T>('GET', path, opts);
  }

  post<T = unknown>(path: string, json?: unknown, opts: RequestOptions = {}): Promise<Reply<T>> {
    return this.request<T>('POST', path, json === undefined ? opts : { ...opts, json });
  }

  async request<T = unknown>(method: string, path: string, opts: RequestOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    if (this.jar.size) headers.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    let body = opts.body;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(new URL(path, this.base), { method, headers, body, ...(opts.signal ? { signal: opts.signal } : {}) }).catch(
      (err: unknown) => {
        // undici says only "fetch failed"; the cause (ECONNRESET, ECONNREFUSED) is what a flaky run needs.
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        if (err instanceof TypeError && cause)
          err.message = `${method} ${path}: fetch failed: ${cause.code ?? cause.message ?? JSON.stringify(cause)}`;
        throw err;
      },
    );
    const text = await res.text();
    const setCookies = res.headers.getSetCookie().map(parseSetCookie);
    for (const c of setCookies) this.store(c);
    const type = res.headers.get('content-type') ?? '';
    const json = (/json/.test(type) && text ? JSON.parse(text) : undefined) as T;
    return { status: res.status, headers: res.headers, text, json, setCookies };
  }

  private store(c: SetCookie): void {
    const expires = typeof c.attrs.expires === 'string' ? Date.parse(c.attrs.expires) : NaN;
    if (c.value === '' || expires <= Date.now()) this.jar.delete(c.name);
    else this.jar.set(c.name, c.value);
  }
}
