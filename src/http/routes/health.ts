// GET /healthz and GET /readyz: for probes and load balancers, without a session and without
// detail. Alive is "this process answers HTTP"; ready is "the store is open and the loops run"
// (what `ready` says). Not ready is 503 NOT_READY, a problem+json that says only that.
import { ServiceUnavailableError } from '../../errors.js';
import { route, type AnyRoute } from '../route.js';

export function healthRoutes(ready: () => boolean): AnyRoute[] {
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
  ];
}
