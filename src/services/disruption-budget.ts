// The disruption budget as the API reads and sets it: its two limits (DisruptionBudget/default's
// spec) and the leases held (its status, which only the loops write). A setting a specs file
// declares (a Cluster document's `disruptionBudget`) is the file's: the guarded store refuses
// the API's write of it (409 SPEC_OWNED naming the file). Lowering a limit revokes nothing: the
// leases held keep going, and new requests wait until the budget admits them again.
import { ConflictError } from '../errors.js';
import { fileSource } from '../gitops/world.js';
import {
  DISRUPTION_BUDGET_ID,
  DisruptionKind,
  DisruptionLeaseKind,
  type DisruptionBudgetSpec,
  type DisruptionBudgetStatus,
  type DisruptionLease,
} from '../model/disruption-kinds.js';
import { BUDGET_DEFAULTS, type BudgetSettings } from '../model/disruption-settings.js';
import type { Store } from '../store/types.js';

export interface LeaseView {
  holderKind: string;
  holderId: string;
  kind: DisruptionLeaseKind;
  what: string;
  nodes: string[];
  domains: string[];
  since: string;
}

export interface BudgetAnswer {
  maxUnavailable: number;
  maxDisruptions: number;
  /** The specs file that sets the limits, or null when the API (or nobody) did. */
  file: string | null;
  leases: LeaseView[];
}

/** An older document's lease has no kind, nodes nor domains: a drain of no node. */
const leaseView = (l: DisruptionLease): LeaseView => ({
  holderKind: l.holderKind,
  holderId: l.holderId,
  kind: l.kind ?? DisruptionLeaseKind.drain,
  what: l.what,
  nodes: l.nodes ?? [],
  domains: l.domains ?? [],
  since: l.since,
});

export class DisruptionBudgetSettings {
  constructor(private readonly store: Store) {}

  async view(): Promise<BudgetAnswer> {
    const doc = await this.store.get<DisruptionBudgetSpec, DisruptionBudgetStatus>(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID);
    const src = doc?.metadata.source;
    return {
      maxUnavailable: doc?.spec.maxUnavailable ?? BUDGET_DEFAULTS.maxUnavailable,
      maxDisruptions: doc?.spec.maxDisruptions ?? BUDGET_DEFAULTS.maxDisruptions,
      file: fileSource(src) && !src.orphaned ? src.file : null,
      leases: (doc?.status.leases ?? []).map(leaseView),
    };
  }

  /** Sets the limits given, keeping the other; the document is made if no lease made it yet. */
  async set(input: BudgetSettings): Promise<BudgetAnswer> {
    const given = {
      ...(input.maxUnavailable === undefined ? {} : { maxUnavailable: input.maxUnavailable }),
      ...(input.maxDisruptions === undefined ? {} : { maxDisruptions: input.maxDisruptions }),
    };
    for (let attempt = 0; ; attempt++) {
      const doc = await this.store.get(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID);
      if (doc) {
        await this.store.mutateSpec<DisruptionBudgetSpec>(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID, (d) => ({
          ...d.spec,
          ...given,
        }));
        return this.view();
      }
      try {
        await this.store.create<DisruptionBudgetSpec>({
          kind: DisruptionKind.DisruptionBudget,
          id: DISRUPTION_BUDGET_ID,
          name: 'disruption-budget',
          spec: { ...BUDGET_DEFAULTS, ...given },
          status: {},
        });
        return await this.view();
      } catch (err) {
        // A loop took the first lease meanwhile, making the document: set it the ordinary way.
        if (!(err instanceof ConflictError) || attempt >= 3) throw err;
      }
    }
  }
}
