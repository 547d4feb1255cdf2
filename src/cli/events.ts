// Events as the CLI reads them from GET /events: the replay buffer (what happened lately, for
// describe and `events`), and the live stream (`events -w`), each line with its time and names.
import type { ApiClient } from './client.js';
import { clock } from './format.js';
import { frames } from './sse.js';
import type { EventView } from './views.js';

/** How long the replay may take to arrive before what came is taken as all of it. */
const REPLAY_QUIET_MS = 300;
/** The server keeps the last 10,000 events; further back is a resync. */
const REPLAY_SPAN = 9_000;
const REPLAY_MAX_MS = 3_000;

function parse(id: string, data: string): EventView | null {
  try {
    const e = JSON.parse(data) as Partial<Omit<EventView, 'id'>> & { type: string };
    return { id, ...e, payload: e.payload ?? {} };
  } catch {
    return null;
  }
}

/** The events the server still holds, oldest first. */
export async function recentEvents(api: ApiClient, from = 0): Promise<EventView[]> {
  const abort = new AbortController();
  const got: EventView[] = [];
  let timer: NodeJS.Timeout | undefined;
  const quiet = () => {
    clearTimeout(timer);
    timer = setTimeout(() => abort.abort(), REPLAY_QUIET_MS);
  };
  try {
    const res = await api.stream(`/events?lastEventId=${from}`, {}, abort.signal);
    // Live events follow the replay: a busy server never goes quiet, so stop after a while anyway.
    setTimeout(() => abort.abort(), REPLAY_MAX_MS).unref();
    quiet();
    for await (const f of frames(res)) {
      const e = parse(f.id, f.data);
      if (e?.type === 'resync') {
        abort.abort();
        const last = Number(e.id);
        return from === 0 && last > REPLAY_SPAN ? await recentEvents(api, last - REPLAY_SPAN) : got;
      }
      if (e) got.push(e);
      quiet();
    }
  } catch (err) {
    if ((err as Error).name !== 'AbortError') throw err;
  } finally {
    clearTimeout(timer);
  }
  return got;
}

/** Follows the stream from now (or after `lastEventId`), until the signal aborts. */
export async function* liveEvents(api: ApiClient, signal: AbortSignal, lastEventId?: string): AsyncGenerator<EventView> {
  const res = await api.stream(lastEventId ? `/events?lastEventId=${lastEventId}` : '/events', {}, signal);
  try {
    for await (const f of frames(res)) {
      const e = parse(f.id, f.data);
      if (e) yield e;
    }
  } catch (err) {
    if ((err as Error).name !== 'AbortError') throw err;
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** The object an event is about, by name: a node's hostname, a target's names, a file. */
export function subject(p: Record<string, unknown>): string {
  const target = p.target as Record<string, unknown> | undefined;
  if (target) {
    const name = str(target.name) ?? str(target.id) ?? '';
    if (target.kind === 'Disk' && str(target.devicePath)) return `Disk ${name.split('/')[0]}:${String(target.devicePath)}`;
    if (target.kind === 'Node') return `Node ${str(target.hostname) ?? name}${str(target.yamlName) ? ` (${String(target.yamlName)})` : ''}`;
    return `${str(target.kind) ?? ''} ${str(target.yamlName) ?? name}`.trim();
  }
  if (str(p.hostname)) return `Node ${String(p.hostname)}${str(p.yamlName) ? ` (${String(p.yamlName)})` : ''}`;
  if (str(p.file)) return `file ${String(p.file)}`;
  if (str(p.name)) return String(p.name);
  return '';
}

/** What happened, in a few words. */
function what(e: EventView): string {
  const p = e.payload;
  switch (e.type) {
    case 'task.state.changed':
      return `${String(p.taskName)} ${String(p.state)}${str(p.error) ? `: ${String(p.error)}` : ''}`;
    case 'node.state.changed':
      return `${String(p.status)}${str(p.reason) ? ` (${String(p.reason)}${str(p.message) ? `: ${String(p.message)}` : ''})` : ''}`;
    case 'task.question.asked':
      return `asks: ${String(p.prompt)} [${(p.options as string[] | undefined)?.join('/') ?? ''}] (question ${String(p.questionId).slice(0, 8)})`;
    case 'task.question.answered':
      return `answered ${String(p.answer)} by ${String(p.answeredBy)}`;
    case 'image.download.progress':
      return `${String(p.percent)}%${p.done ? ' done' : ''}`;
    case 'specs.failed':
    case 'specs.pending':
    case 'specs.pending.cleared':
      return [str(p.kind), str(p.name), str(p.reason), str(p.message)].filter(Boolean).join(' ');
    case 'specs.applied':
      return str(p.state) ?? 'applied';
    default:
      return str(p.message) ?? str(p.what) ?? '';
  }
}

export function eventLine(e: EventView): string {
  return [clock(e.at), e.type.padEnd(22), subject(e.payload), what(e)].filter((x) => x !== '').join('  ');
}

/** Whether an event concerns the object with this id (as target, node or by its own id field). */
export function concerns(e: EventView, id: string): boolean {
  const p = e.payload;
  const target = p.target as { id?: string } | undefined;
  const node = p.node as { id?: string } | null | undefined;
  return target?.id === id || node?.id === id || p.nodeId === id || p.diskId === id || p.runId === id || p.holderId === id;
}
