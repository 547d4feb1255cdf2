// GET /audit: the desired-state changes the store recorded (src/store/audit.ts), newest first,
// for admins. Entries name objects and fields, never values, so none holds a secret.
import { InputError } from '../../errors.js';
import { AuditKind, auditEntrySpecSchema, type AuditEntrySpec } from '../../model/audit-kinds.js';
import type { Store } from '../../store/types.js';
import { route, type AnyRoute } from '../route.js';
import { object } from '../schemas.js';

interface AuditQuery {
  kind?: string;
  objectId?: string;
  actor?: string;
  since?: string;
  limit?: number;
}

const entryView = {
  ...auditEntrySpecSchema,
  required: ['id', ...(auditEntrySpecSchema.required as string[])],
  properties: { id: { type: 'string', description: 'increases with every entry' }, ...(auditEntrySpecSchema.properties as object) },
};

/** `actor` matches an actor's name (`alice`, `alice/ci`, `cluster.yaml`, `node`) or `type:name`. */
function actorMatches(filter: string, actor: AuditEntrySpec['actor']): boolean {
  return filter === actor.name || filter === `${actor.type}:${actor.name}`;
}

export function auditRoutes(store: Store): AnyRoute[] {
  return [
    route<unknown, AuditQuery>({
      method: 'GET',
      path: '/audit',
      summary:
        'The audit trail: every desired-state change (who — a user, an API token, a spec file or Quarry —, when, which object, generation before and after, the changed spec fields, the request id), newest first',
      tags: ['audit'],
      admin: true,
      query: object({
        kind: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9]{0,63}$', description: 'only changes of this kind (Node, Disk, ...)' },
        objectId: { type: 'string', minLength: 1, maxLength: 128, description: 'only changes of this object' },
        actor: {
          type: 'string',
          minLength: 1,
          maxLength: 256,
          description:
            "only this actor's changes: its name (alice, alice/ci, lab.yaml) or type:name (user:alice, token:alice/ci, file:lab.yaml)",
        },
        since: { type: 'string', format: 'date-time', description: 'only changes at or after this time (ISO 8601)' },
        limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
      }),
      response: {
        description: 'at most limit entries, newest first; the store keeps the newest AUDIT_MAX_ENTRIES',
        schema: object({ entries: { type: 'array', items: entryView } }, ['entries']),
      },
      handler: async ({ query }) => {
        const since = query.since === undefined ? null : Date.parse(query.since);
        if (since !== null && Number.isNaN(since))
          throw new InputError('since is not a time', [{ path: '/query/since', message: 'must be an ISO 8601 date-time' }]);
        const limit = query.limit ?? 100;
        const all = await store.list<AuditEntrySpec>(AuditKind.AuditEntry);
        const entries: Array<AuditEntrySpec & { id: string }> = [];
        for (let i = all.length - 1; i >= 0 && entries.length < limit; i--) {
          const doc = all[i]!;
          const e = doc.spec;
          if (since !== null && Date.parse(e.at) < since) continue;
          if (query.kind !== undefined && e.kind !== query.kind) continue;
          if (query.objectId !== undefined && e.objectId !== query.objectId) continue;
          if (query.actor !== undefined && !actorMatches(query.actor, e.actor)) continue;
          entries.push({ id: doc.id, ...e });
        }
        return { entries };
      },
    }),
  ];
}
