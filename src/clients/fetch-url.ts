// fetch for URLs an operator configures: `http://user:pass@host/...` works (the credentials
// travel as Basic authorization, which fetch refuses to take from the URL), and the URL as logs
// and errors show it carries neither the credentials nor the query (signed URLs keep tokens there).

export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

export function fetchUrl(url: string, init: RequestInit & { headers?: Record<string, string> }): Promise<Response> {
  const u = new URL(url);
  if (!u.username && !u.password) return fetch(u, init);
  const basic = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
  u.username = '';
  u.password = '';
  // Through Headers: init.headers may be a Headers object or an array of pairs, which an object
  // spread would turn into nothing or into numbered keys.
  const headers = new Headers(init.headers);
  headers.set('authorization', `Basic ${basic}`);
  return fetch(u, { ...init, headers });
}

/** Why a fetch did not get an answer, without the URL that fetch's own messages may quote. */
export function fetchFailure(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string' && !cause.message.includes('//')) return cause.message;
  return err instanceof Error ? err.name : 'unknown error';
}
