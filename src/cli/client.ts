// The CLI's one way to the API: every call sends `Authorization: Bearer <token>`; a problem+json
// answer becomes a ServerError (exit 1), a refused token or no answer at all exit 4.
import { ExitCode, ServerError, UnreachableError, type Problem } from './errors.js';

export interface Answer<T> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  json?: unknown;
  text?: string;
  contentType?: string;
  /** Answers with these statuses are returned, not thrown (a 404 the caller handles). */
  accept?: number[];
  signal?: AbortSignal;
  cookie?: string;
}

export class ApiClient {
  constructor(
    readonly server: string,
    private readonly token: string | null,
  ) {}

  async get<T>(path: string, opts: RequestOptions = {}): Promise<T> {
    return (await this.request<T>('GET', path, opts)).body;
  }

  async send<T>(method: string, path: string, opts: RequestOptions = {}): Promise<Answer<T>> {
    return this.request<T>(method, path, opts);
  }

  /** The raw response, for streams (GET /events). */
  async stream(path: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
    const res = await this.fetch('GET', path, { headers: { ...this.auth(), accept: 'text/event-stream', ...headers }, signal });
    if (!res.ok) await this.refuse(res);
    return res;
  }

  private auth(): Record<string, string> {
    return this.token ? { authorization: `Bearer ${this.token}` } : {};
  }

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = { ...this.auth(), accept: 'application/json' };
    if (opts.cookie) headers.cookie = opts.cookie;
    let body: string | undefined;
    if (opts.json !== undefined) {
      body = JSON.stringify(opts.json);
      headers['content-type'] = 'application/json';
    } else if (opts.text !== undefined) {
      body = opts.text;
      headers['content-type'] = opts.contentType ?? 'text/plain';
    }
    const res = await this.fetch(method, path, { headers, body, signal: opts.signal });
    if (!res.ok && !(opts.accept ?? []).includes(res.status)) await this.refuse(res);
    const type = res.headers.get('content-type') ?? '';
    const text = await res.text();
    const parsed = /json/.test(type) && text ? (JSON.parse(text) as T) : (text as T);
    return { status: res.status, body: parsed, headers: res.headers };
  }

  private async fetch(
    method: string,
    path: string,
    init: { headers: Record<string, string>; body?: string; signal?: AbortSignal | undefined },
  ): Promise<Response> {
    try {
      return await fetch(new URL(path, `${this.server}/`), { method, redirect: 'manual', ...init });
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new UnreachableError(`cannot reach ${this.server}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
    }
  }

  private async refuse(res: Response): Promise<never> {
    const text = await res.text().catch(() => '');
    let problem: Problem = { title: res.statusText, status: res.status };
    try {
      problem = JSON.parse(text) as Problem;
    } catch {
      // not problem+json (a proxy's page): the status line says it
    }
    if (res.status === 401 && this.token) {
      throw new ServerError(
        res.status,
        problem,
        ExitCode.unreachable,
        'the token was refused (expired or revoked): run `quarry login` again',
      );
    }
    throw new ServerError(res.status, problem);
  }
}
