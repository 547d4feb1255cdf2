// A real EventSource on a controller's /events with an admin session, recording what arrives
// (id, type, the node it names, when), for the tests of several controllers.
import type { ExecutionContext } from 'ava';
import { EventSource } from 'eventsource';
import { Client } from '../http/client.js';

export interface Seen {
  id: number;
  type: string;
  nodeId: string | undefined;
  at: number;
}

export interface EventStream {
  seen: Seen[];
  /** Errors the EventSource reported after it opened (a reconnect is one). */
  errors: string[];
}

export async function openEventStream(t: ExecutionContext, url: string, password: string, lastEventId?: number): Promise<EventStream> {
  const c = new Client(url);
  await c.post('/user/login', { username: 'admin', password });
  const cookie = [...c.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const resume: Record<string, string> = lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) };
  const es = new EventSource(`${url}/events`, {
    fetch: (u, init) => fetch(u, { ...init, headers: { ...init.headers, cookie, ...resume } }),
  });
  t.teardown(() => es.close());
  const out: EventStream = { seen: [], errors: [] };
  es.onmessage = (m) => {
    const body = JSON.parse(m.data as string) as { type: string; payload?: { nodeId?: string } };
    out.seen.push({ id: Number(m.lastEventId), type: body.type, nodeId: body.payload?.nodeId, at: Date.now() });
  };
  await new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => reject(new Error(`EventSource error ${String((e as { code?: number }).code)}`));
  });
  es.onerror = (e) => out.errors.push(`EventSource error ${String((e as { code?: number }).code)}`);
  return out;
}

/** Whether the ids only grow. */
export const increasing = (seen: Seen[]): boolean => seen.every((e, i) => i === 0 || e.id > (seen[i - 1]?.id ?? 0));
