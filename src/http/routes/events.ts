// GET /events: the live stream of what the loops and tasks do. It only relays the bus through
// the hub; the session check happens in the route layer like every other private route.
import type { SseHub } from '../sse/hub.js';
import { sseHandler } from '../sse/handler.js';
import { route, type AnyRoute } from '../route.js';
import { object } from '../schemas.js';

export function eventRoutes(hub: SseHub): AnyRoute[] {
  const stream = sseHandler(hub);
  return [
    route<unknown, { lastEventId?: string }>({
      method: 'GET',
      path: '/events',
      summary: 'Server-sent events: `id: <n>` and one `data:` line of {type, payload}; resume with Last-Event-ID',
      tags: ['events'],
      query: object({ lastEventId: { type: 'string', pattern: '^[0-9]{1,16}$' } }),
      response: { description: 'an endless text/event-stream', contentType: 'text/event-stream' },
      handler: async ({ ctx }) => {
        await stream(ctx as never, async () => {});
        return undefined;
      },
    }),
  ];
}
