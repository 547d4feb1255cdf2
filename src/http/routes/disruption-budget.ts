// The disruption budget's settings and the leases it holds: anyone logged in reads, admins set
// the limits (a specs file that sets them owns them: 409 SPEC_OWNED).
import { DISRUPTION_LEASE_KINDS } from '../../model/disruption-kinds.js';
import { budgetSettingsSchema, type BudgetSettings } from '../../model/disruption-settings.js';
import type { DisruptionBudgetSettings } from '../../services/disruption-budget.js';
import { route, type AnyRoute } from '../route.js';
import { object } from '../schemas.js';

const strings = { type: 'array', items: { type: 'string' } };
const leaseSchema = object(
  {
    holderKind: { type: 'string' },
    holderId: { type: 'string' },
    kind: { enum: DISRUPTION_LEASE_KINDS },
    what: { type: 'string' },
    nodes: { ...strings, description: 'node ids' },
    domains: { ...strings, description: 'failure domains (hostnames, or `rack:r1` when the failure domain is a level)' },
    since: { type: 'string', format: 'date-time' },
  },
  ['holderKind', 'holderId', 'kind', 'what', 'nodes', 'domains', 'since'],
);
const limit = { type: 'integer', minimum: 1 };
const budgetSchema = object(
  {
    maxUnavailable: { ...limit, description: 'failure domains that may be disrupted at once' },
    maxDisruptions: { ...limit, description: 'OSD drains that may be under way at once' },
    file: { type: ['string', 'null'], description: 'the specs file that sets the limits (its Cluster `disruptionBudget`), or null' },
    leases: { type: 'array', items: leaseSchema },
  },
  ['maxUnavailable', 'maxDisruptions', 'file', 'leases'],
);

export function disruptionBudgetRoutes(budget: DisruptionBudgetSettings): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/ceph/cluster/disruption-budget',
      summary: 'The disruption budget: its limits and the leases held (holder, kind, nodes, failure domains, since)',
      tags: ['ceph'],
      response: { description: 'the budget', schema: budgetSchema },
      handler: () => budget.view(),
    }),
    route<BudgetSettings>({
      method: 'PUT',
      path: '/ceph/cluster/disruption-budget',
      summary:
        "Set the budget's limits (either or both). Leases held are not revoked by a lower limit: new disruptions wait until the budget admits them",
      tags: ['ceph'],
      admin: true,
      body: budgetSettingsSchema,
      response: { description: 'the budget as set', schema: budgetSchema },
      errors: [409],
      handler: ({ body }) => budget.set(body),
    }),
  ];
}
