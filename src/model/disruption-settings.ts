// The disruption budget's two settings as an operator gives them: `PUT /ceph/cluster/disruption-budget`
// or a Cluster spec file's `disruptionBudget`. They are DisruptionBudget/default's spec
// (disruption-kinds.ts); the gate (reconcilers/shared/disruption-gate.ts) reads them there.

/** The limits when nothing set them: the gate's defaults (test/http/disruption-budget.test.ts
 * checks they agree). */
export const BUDGET_DEFAULTS = { maxUnavailable: 1, maxDisruptions: 1 } as const;

export interface BudgetSettings {
  maxUnavailable?: number;
  maxDisruptions?: number;
}

export const BUDGET_SETTING_FIELDS = ['maxUnavailable', 'maxDisruptions'] as const;

/** Either or both; the bounds are those of the stored document's schema. */
export const budgetSettingsSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    maxUnavailable: {
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      description: 'failure domains that may be disrupted at once (default 1)',
    },
    maxDisruptions: { type: 'integer', minimum: 1, maximum: 1000, description: 'OSD drains that may be under way at once (default 1)' },
  },
} as const;
