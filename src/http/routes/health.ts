// GET /healthz, /readyz and /leaderz: for probes and load balancers, without a session and
// without detail. Alive is "this process answers HTTP"; ready is "the store is open and the loops
// run" (what `ready` says). Not ready is 503 NOT_READY, a problem+json that says only that.
// Leading is "this controller holds the leadership" (#18): a balancer that sends everything to
// the leader spares the followers the relaying; a follower is 503 NOT_LEADER, and a controller
// without a LeaderView is the only one and leads.
import { ServiceUnavailableError } from '../../errors.js';
import type { LeaderView } from '../../model/leadership.js';
import { route, type AnyRoute } from '../route.js';

export function healthRoutes(ready: () => boolean, leader?: LeaderView): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/healthz',
      summary: 'Alive: the process answers (no session needed)',
      tags: ['health'],
      public: true,
      response: { description: '`ok`', contentType: 'text/plain' },
      handler: () => 'ok',
    }),
    route({
      method: 'GET',
      path: '/readyz',
      summary: 'Ready: the store is open and the reconcile loops run (no session needed); 503 NOT_READY otherwise',
      tags: ['health'],
      public: true,
      response: { description: '`ok`', contentType: 'text/plain' },
      errors: [503],
      handler: () => {
        if (!ready()) throw new ServiceUnavailableError('not ready', 'NOT_READY');
        return 'ok';
      },
    }),
    route({
      method: 'GET',
      path: '/leaderz',
      summary: 'Leading: this controller runs the loops and the task runs (no session needed); 503 NOT_LEADER on a follower',
      tags: ['health'],
      public: true,
      response: { description: '`leader`', contentType: 'text/plain' },
      errors: [503],
      handler: () => {
        // No Retry-After: a follower does not become the leader by being asked again soon.
        if (leader && !leader.isLeader()) throw new ServiceUnavailableError('this controller follows', 'NOT_LEADER');
        return 'leader';
      },
    }),
  ];
}
