// Quarry's API from the page: same-origin fetch with the session cookies (HttpOnly, SameSite=
// Strict: the page never sees them), JSON bodies (the API's cross-site guard and its JSON-only
// writes are the CSRF protection). An answer of 401 refreshes the access token once and asks
// again; a refused refresh means the session is over and the page shows its login form.
import { refreshDelayMs } from './logic.js';
import type { Problem, User } from './types.js';

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail ?? `HTTP ${problem.status}`);
  }
}

type Listener = (user: User | null) => void;

export class Session {
  user: User | null = null;
  private readonly listeners = new Set<Listener>();
  private refreshing: Promise<boolean> | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;

  onChange(l: Listener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Who is logged in: the cookies may hold a session already (a reload, another tab). */
  async resume(): Promise<User | null> {
    try {
      this.set(await this.get<User>('/user/me'));
      this.keepAlive();
    } catch {
      this.set(null);
    }
    return this.user;
  }

  async login(username: string, password: string): Promise<User> {
    const user = await this.send<User>('POST', '/user/login', { username, password }, false);
    this.set(user);
    this.keepAlive();
    return user;
  }

  /** Neither the login answer nor GET /user/me says how long the access token lives; a refresh
   * does, and from then on each refresh is timed before the token runs out. */
  private keepAlive(): void {
    if (this.timer === undefined) void this.refresh();
  }

  async logout(): Promise<void> {
    try {
      await this.send('POST', '/user/logout', undefined, false);
    } finally {
      this.set(null);
    }
  }

  get<T>(path: string): Promise<T> {
    return this.send<T>('GET', path);
  }

  post<T>(path: string, body: unknown, contentType = 'application/json'): Promise<T> {
    return this.send<T>('POST', path, body, true, contentType);
  }

  /** A new access token, one request at a time: a refresh token is single-use, and two
   * refreshes racing with the same one would end the session (reuse detection). */
  refresh(): Promise<boolean> {
    this.refreshing ??= (async () => {
      try {
        const r = await fetch('/user/refresh', { method: 'POST', credentials: 'same-origin' });
        // A refused refresh token (expired, revoked, reused): the session is over.
        if (r.status === 401) this.set(null);
        if (!r.ok) return false;
        const { expiresIn } = (await r.json()) as { expiresIn: number };
        this.schedule(expiresIn);
        return true;
      } catch {
        return false;
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  private schedule(expiresInSeconds: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      void this.refresh().then((ok) => {
        if (!ok) this.set(null);
      });
    }, refreshDelayMs(expiresInSeconds));
  }

  private set(user: User | null): void {
    const changed = (user?.id ?? null) !== (this.user?.id ?? null);
    this.user = user;
    if (!user) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (changed) for (const l of this.listeners) l(user);
  }

  private async send<T>(method: string, path: string, body?: unknown, retry = true, contentType = 'application/json'): Promise<T> {
    const init: RequestInit = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (body !== undefined) {
      init.headers = { Accept: 'application/json', 'Content-Type': contentType };
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
    }
    let r = await fetch(path, init);
    if (r.status === 401 && retry) {
      if (await this.refresh()) r = await fetch(path, init);
      if (r.status === 401) this.set(null);
    }
    if (r.status === 204) return undefined as T;
    const text = await r.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined; // not JSON (a proxy's error page): the status says enough
    }
    if (!r.ok) throw new ApiError({ status: r.status, ...(json as Omit<Problem, 'status'> | undefined) });
    return json as T;
  }
}
