// GET /status: the one answer to "is it done, is it healthy?" (src/services/convergence.ts).
import { READY_KINDS } from '../../model/readiness.js';
import type { Convergence } from '../../services/convergence.js';
import { route, type AnyRoute } from '../route.js';
import { object } from '../schemas.js';

const str = { type: 'string' };
const count = { type: 'integer', minimum: 0 };
const kind = { enum: READY_KINDS };
const severity = { enum: ['HEALTH_OK', 'HEALTH_WARN', 'HEALTH_ERR'] };
const ref = object({ kind, id: str, name: str }, ['kind', 'id', 'name']);
/** A health check as attached to one object: the detail lines that name it. */
export const attachedCheckView = object({ code: str, severity, message: str, detail: { type: 'array', items: str } }, [
  'code',
  'severity',
  'message',
  'detail',
]);

const summarySchema = object(
  {
    health: object(
      {
        status: { enum: ['HEALTH_OK', 'HEALTH_WARN', 'HEALTH_ERR', 'UNKNOWN'], description: 'UNKNOWN until Ceph has answered' },
        checks: {
          type: 'array',
          items: object({ code: str, severity, message: str, count, objects: { type: 'array', items: ref } }, [
            'code',
            'severity',
            'message',
            'count',
            'objects',
          ]),
          description: "Ceph's health checks, each with the objects its detail lines name (none: the cluster's)",
        },
      },
      ['status', 'checks'],
    ),
    converged: { type: 'boolean', description: 'every object is Ready' },
    convergence: { type: 'array', items: object({ kind, ready: count, total: count }, ['kind', 'ready', 'total']) },
    blocked: {
      type: 'array',
      items: object(
        {
          kind,
          id: str,
          name: str,
          reason: str,
          message: str,
          since: { type: ['string', 'null'] },
          checks: { type: 'array', items: attachedCheckView },
          file: { type: 'string', description: "a specs file's pending entry: the file (id '' when the object does not exist yet)" },
        },
        ['kind', 'id', 'name', 'reason', 'message', 'since', 'checks'],
      ),
      description: 'the objects that are not Ready, with why (the first 500)',
    },
    blockedCount: count,
  },
  ['health', 'converged', 'convergence', 'blocked', 'blockedCount'],
);

export function statusRoutes(convergence: Convergence): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/status',
      // Ceph's health as the leader reads it, and its specs folder's pending entries.
      leader: true,
      tags: ['status'],
      summary:
        "Is it done, is it healthy: Ceph's health, how many objects of each kind are Ready, the objects that are not with why, and Ceph's health checks attached to the nodes, disks, daemons and filesystems they name",
      response: { description: 'the summary', schema: summarySchema },
      handler: () => convergence.summary(),
    }),
  ];
}
