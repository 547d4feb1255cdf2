// GET /events: the live stream of what the loops and tasks do. It only relays the bus through
// the hub; the session check happens in the route layer like every other private route, and
// the stream ends when that session does (sse/streams.ts). With several controllers every one
// serves it: its hub streams the leader's events from the store (src/main/event-feed.ts).
import type { SseHub } from '../sse/hub.js';
import { openStream } from '../sse/handler.js';
import { SessionStreams, SSE_STREAMS_PER_USER, type SessionSource } from '../sse/streams.js';
import { route, type AnyRoute } from '../route.js';
import { object } from '../schemas.js';

/** What the route needs of the app's area context (app.ts AreaContext fits). */
export interface EventArea {
  /** Sessions and API tokens (Auth.liveness): a stream ends when what opened it does. */
  auth: { liveness: SessionSource };
  sseStreamsPerUser?: number;
}

export function eventRoutes(hub: SseHub): (area: EventArea) => AnyRoute[] {
  return (area) => {
    const streams = new SessionStreams(area.auth.liveness, area.sseStreamsPerUser ?? SSE_STREAMS_PER_USER);
    return [
      route<unknown, { lastEventId?: string }>({
        method: 'GET',
        path: '/events',
        summary:
          'Server-sent events: `id: <n>` and one `data:` line of {type, payload}; resume with Last-Event-ID. ' +
          `The stream ends when its session or API token does (logout, refresh-token reuse, revocation, expiry); a user may hold ${streams.maxPerUser} at once, more are 429.`,
        tags: ['events'],
        query: object({ lastEventId: { type: 'string', pattern: '^[0-9]{1,16}$' } }),
        response: { description: 'an endless text/event-stream', contentType: 'text/event-stream' },
        errors: [429],
        handler: async ({ ctx, principal }) => {
          const owner = { userId: principal!.user.id, sessionId: principal!.sessionId };
          streams.admit(owner);
          streams.add(owner, openStream(hub, ctx), ctx.res);
          return undefined;
        },
      }),
    ];
  };
}
