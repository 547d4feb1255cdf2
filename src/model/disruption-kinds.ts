// The cluster-wide disruption budget: one document saying which disruptions are under way, so
// whatever restarts in between, at most `maxUnavailable` failure domains are disrupted at once
// and at most `maxDisruptions` OSD drains run at once. Every disruptive step takes a lease from
// it first (reconcilers/shared/disruption-gate.ts decides, disruption-leases.ts writes).

import { Daemon } from '../catalogue/index.js';

type JsonSchema = Record<string, unknown>;

export const DisruptionKind = { DisruptionBudget: 'DisruptionBudget' } as const;

/** The id of the one budget document. */
export const DISRUPTION_BUDGET_ID = 'default';

export interface DisruptionBudgetSpec {
  /** OSD drains that may be under way at once, cluster-wide. */
  maxDisruptions: number;
  /** Failure domains that may be disrupted at once (default 1). */
  maxUnavailable?: number;
}

/** What a lease is for. Old documents' leases have no kind: they read as drains. */
export const DisruptionLeaseKind = {
  drain: 'drain',
  restart: 'restart',
  shutdown: 'shutdown',
  maintenance: 'maintenance',
  daemonRestart: 'daemon-restart',
  /** A hung node power-cycled through its BMC (fencing: bmc). */
  fence: 'fence',
} as const;
export type DisruptionLeaseKind = (typeof DisruptionLeaseKind)[keyof typeof DisruptionLeaseKind];
export const DISRUPTION_LEASE_KINDS = Object.values(DisruptionLeaseKind);

/** The daemons a lease stops, as they ran when it was taken (Ceph names: osd ids, mon and MDS
 * names): what further admissions ask Ceph about together with their own. */
export interface LeaseStops {
  osds: number[];
  mons: string[];
  mds: string[];
}

/** One disruption under way: who holds it, what it does, since when, on which nodes and
 * failure domains. `kind`, `nodes`, `domains` absent (an older document): a drain of no node. */
export interface DisruptionLease {
  holderKind: string;
  holderId: string;
  /** For an operator: `drain of osd.3 (node-1/SER1)`. */
  what: string;
  since: string;
  kind?: DisruptionLeaseKind;
  /** Node ids. */
  nodes?: string[];
  /** Failure-domain names (hostnames, or label values when the failure domain is a rack...). */
  domains?: string[];
  stops?: LeaseStops;
}

export interface DisruptionBudgetStatus {
  leases?: DisruptionLease[];
}

export const disruptionBudgetSchemas = {
  spec: {
    type: 'object',
    required: ['maxDisruptions'],
    additionalProperties: false,
    properties: {
      maxDisruptions: { type: 'integer', minimum: 1, maximum: 1000 },
      maxUnavailable: { type: 'integer', minimum: 1, maximum: 1000 },
    },
  },
  status: {
    type: 'object',
    additionalProperties: false,
    properties: {
      leases: {
        type: 'array',
        maxItems: 1000,
        items: {
          type: 'object',
          required: ['holderKind', 'holderId', 'what', 'since'],
          additionalProperties: false,
          properties: {
            holderKind: { type: 'string', minLength: 1, maxLength: 64 },
            holderId: { type: 'string', minLength: 1, maxLength: 128 },
            what: { type: 'string', maxLength: 512 },
            since: { type: 'string', format: 'date-time' },
            kind: { enum: DISRUPTION_LEASE_KINDS },
            nodes: { type: 'array', maxItems: 10000, items: { type: 'string', minLength: 1, maxLength: 128 } },
            domains: { type: 'array', maxItems: 10000, items: { type: 'string', minLength: 1, maxLength: 253 } },
            stops: {
              type: 'object',
              required: ['osds', 'mons', Daemon.mds],
              additionalProperties: false,
              properties: {
                osds: { type: 'array', items: { type: 'integer', minimum: 0 } },
                mons: { type: 'array', items: { type: 'string', maxLength: 253 } },
                [Daemon.mds]: { type: 'array', items: { type: 'string', maxLength: 253 } },
              },
            },
          },
        },
      },
    },
  },
} satisfies { spec: JsonSchema; status: JsonSchema };
