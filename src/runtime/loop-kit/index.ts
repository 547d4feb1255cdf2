// The loop kit: one plan shape, one apply, one Result mapping, one grace rule, one status
// writer, for every reconcile loop (docs/architecture.md, "The loop kit").
export { gateOf, type Gate, type LoopPlan } from './plan.js';
export { resultOf, type ResultTimings } from './result.js';
export { completedAt, graceWait } from './grace.js';
export { applyPlan, type Act, type LoopEffects } from './apply.js';
export { ownershipClashes } from './ownership.js';
export {
  patchOwned,
  foreignChanges,
  writeOwned,
  writeStatus,
  WRITE_RETRIES,
  type StatusOwner,
  type WriteOptions,
  type WriteOutcome,
} from './status-writer.js';
