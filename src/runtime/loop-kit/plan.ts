// The one plan shape every loop's pure half returns (docs/architecture.md, "The loop kit"):
// the status part this loop owns, at most one step to start, a wait, a gate. The kit's apply
// (apply.ts) turns it into writes, a run and a Result the same way for every loop.

/** A gate or prerequisite not met: shown as a Blocked condition and the `blocked` Result. */
export interface Gate {
  reason: string;
  message: string;
}

export interface LoopPlan<Status, Step> {
  /** The status part this loop owns, as it should read now (the writer skips an unchanged one). */
  status: Status;
  /** The next step, if any; the loop translates it into a task run (or its own effect). */
  step: Step | null;
  /** Look again after this long even if nothing wakes the loop (a backoff, a grace, a poll). */
  requeueAfterMs: number | null;
  /** Set when a gate holds; the loop looks again after its recheck delay or when a watch fires. */
  gate: Gate | null;
}

export const gateOf = (reason: string, message: string): Gate => ({ reason, message });
