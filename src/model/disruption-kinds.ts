// The cluster-wide disruption budget: one document saying which disruptions are under way, so
// at most `maxDisruptions` run at once whatever restarts in between. Today only an OSD's drain
// takes a lease from it (reconcilers/shared/drain-lease.ts); issue #15 turns it into the budget
// every disruptive step (node restarts, daemon moves) takes its turn in.

type JsonSchema = Record<string, unknown>;

export const DisruptionKind = { DisruptionBudget: 'DisruptionBudget' } as const;

/** The id of the one budget document. */
export const DISRUPTION_BUDGET_ID = 'default';

export interface DisruptionBudgetSpec {
  /** Disruptions that may be under way at once, cluster-wide. */
  maxDisruptions: number;
}

/** One disruption under way: who holds it, what it does, since when. */
export interface DisruptionLease {
  holderKind: string;
  holderId: string;
  /** For an operator: `drain of osd.3 (node-1/SER1)`. */
  what: string;
  since: string;
}

export interface DisruptionBudgetStatus {
  leases?: DisruptionLease[];
}

export const disruptionBudgetSchemas = {
  spec: {
    type: 'object',
    required: ['maxDisruptions'],
    additionalProperties: false,
    properties: { maxDisruptions: { type: 'integer', minimum: 1, maximum: 1000 } },
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
          },
        },
      },
    },
  },
} satisfies { spec: JsonSchema; status: JsonSchema };
