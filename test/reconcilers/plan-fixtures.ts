// What the pure plans' tests share: the clock they are planned at, and a run as observe would
// report it (finished runs a minute before NOW unless said otherwise).
import type { RunInfo } from '../../reconcilers/shared/runs.js';
import { T0 } from '../builders.js';

export const NOW = T0 + 1_000_000;

export const run = (state: RunInfo['state'], over: Partial<RunInfo> = {}): RunInfo => ({
  id: 'r1',
  state,
  attempt: 1,
  completedAt: state === 'pending' || state === 'running' ? null : NOW - 60_000,
  error: state === 'failed' ? 'boom' : null,
  args: {},
  result: null,
  ...over,
});
