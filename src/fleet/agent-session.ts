// A node agent's HTTP session with the master, as a real agent keeps one: it logs in with the
// credential on its disk, rotates the installed secret before anything else, sends the session
// cookies with each call, renews the access token with POST /user/refresh on a 401, and logs
// in again when the refresh is refused. No secret ever goes into an error message.
// Shared by the lab's simulated agents and the real agent program (src/agent).

import type { FetchLike } from './bound-fetch.js';

export interface AgentSecret {
  username: string;
  secret: string;
  /** False while it is the secret from the install boot answer, which must be rotated. */
  rotated: boolean;
}

/** Where an agent keeps its credential: a machine's system disk, a file on a real node. */
export interface CredentialStore {
  readonly agentSecret: AgentSecret | null;
  /** Must be durable when it returns: a rotated secret lost to a crash locks the agent out. */
  saveAgentSecret(secret: AgentSecret): void;
}

export interface Answer {
  status: number;
  json: unknown;
  /** The body as received (a monmap is binary). */
  bytes: Buffer;
  /** The master's X-Request-Id for this call. */
  requestId?: string | null;
}

export class AgentHttpError extends Error {
  constructor(
    readonly status: number,
    what: string,
    code: unknown,
    /** The master's id of the refused request (its X-Request-Id): its log line carries it too. */
    readonly requestId: string | null = null,
  ) {
    super(`${what}: HTTP ${status}${typeof code === 'string' ? ` ${code}` : ''}`);
  }
}

/** A failure's fields for an agent's log line: the error, and the master's request id when the
 * master refused a call (so the two log lines are found from each other). */
export function failureFields(err: unknown): { error: string; requestId?: string } {
  const requestId = err instanceof AgentHttpError ? err.requestId : null;
  return { error: String(err), ...(requestId ? { requestId } : {}) };
}

export class AgentSession {
  private readonly cookies = new Map<string, string>();
  private ready: Promise<void> | null = null;
  private renewing: Promise<void> | null = null;

  constructor(
    private readonly base: string,
    private readonly disk: CredentialStore,
    /** The lab's machines speak from their own address (bound-fetch.ts). */
    private readonly fetchFn: FetchLike = fetch,
  ) {}

  /** A new boot: the agent process starts over, with nothing but its disk. */
  reset(): void {
    this.cookies.clear();
    this.ready = null;
    this.renewing = null;
  }

  /** An authenticated call; 2xx answers come back, anything else throws AgentHttpError. */
  async call(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Answer> {
    await this.loggedIn();
    let answer = await this.send(method, path, body, signal);
    if (answer.status === 401) {
      await this.renew();
      answer = await this.send(method, path, body, signal);
    }
    if (answer.status >= 300) throw new AgentHttpError(answer.status, `${method} ${path}`, codeOf(answer), answer.requestId);
    return answer;
  }

  // Shared by every caller, so the heartbeat and the claim loop open one session, not two.
  private loggedIn(): Promise<void> {
    this.ready ??= this.login().catch((err: unknown) => {
      this.ready = null;
      throw err;
    });
    return this.ready;
  }

  private async login(): Promise<void> {
    const own = this.disk.agentSecret;
    if (!own) throw new Error('the machine has no agent credential on its disk');
    this.cookies.clear();
    const r = await this.send('POST', '/user/login', { username: own.username, password: own.secret });
    if (r.status !== 200) throw new AgentHttpError(r.status, 'agent login', codeOf(r), r.requestId);
    if (own.rotated) return;
    const rotated = await this.send('POST', '/node/credential');
    const fresh = rotated.json as { username?: unknown; secret?: unknown } | undefined;
    if (rotated.status !== 200 || typeof fresh?.secret !== 'string')
      throw new AgentHttpError(rotated.status, 'credential rotation', undefined, rotated.requestId);
    this.disk.saveAgentSecret({ username: own.username, secret: fresh.secret, rotated: true });
  }

  /** One renewal at a time: two refreshes with the same refresh token would look like a
   * replay and end the session. */
  private renew(): Promise<void> {
    this.renewing ??= (async () => {
      const r = await this.send('POST', '/user/refresh');
      if (r.status !== 200) {
        this.ready = null;
        await this.loggedIn();
      }
    })().finally(() => (this.renewing = null));
    return this.renewing;
  }

  private async send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await this.fetchFn(new URL(path, this.base), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
    for (const line of res.headers.getSetCookie()) this.keep(line);
    const bytes = Buffer.from(await res.arrayBuffer());
    const json =
      bytes.length && /json/.test(res.headers.get('content-type') ?? '') ? (JSON.parse(bytes.toString('utf8')) as unknown) : undefined;
    return { status: res.status, json, bytes, requestId: res.headers.get('x-request-id') };
  }

  /** Cleared cookies come back empty or already expired. */
  private keep(setCookie: string): void {
    const [pair = ''] = setCookie.split(';');
    const eq = pair.indexOf('=');
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    const expired = /;\s*max-age=0\b/i.test(setCookie) || /;\s*expires=Thu, 01 Jan 1970/i.test(setCookie);
    if (!name) return;
    if (!value || expired) this.cookies.delete(name);
    else this.cookies.set(name, value);
  }
}

const codeOf = (a: Answer): unknown => (a.json as { code?: unknown } | undefined)?.code;
