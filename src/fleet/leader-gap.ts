// An agent's call through a failover: while no controller leads (503 NOT_LEADER), a follower
// cannot reach the leader (502) or the master is away (no answer at all), the call is made
// again rather than failed — a step in the middle of a failover waits for the next leader
// instead of failing, and being started again, for want of its key or of a place for its result.
// Any other refusal is final.
import { AgentHttpError } from './agent-session.js';

export interface GapOptions {
  /** How long to keep trying. */
  patienceMs: number;
  retryMs: number;
  /** Stop trying now (the agent is stopping). */
  halted?: () => boolean;
  /** Told of each failed try that will be made again. */
  onRetry?: (err: unknown) => void;
}

/** Whether a failed call may succeed once a leader is back. */
export const passesWithTheGap = (err: unknown): boolean => !(err instanceof AgentHttpError) || err.status === 502 || err.status === 503;

export async function throughLeaderGap<T>(call: () => Promise<T>, opts: GapOptions): Promise<T> {
  for (let waited = 0; ; waited += opts.retryMs) {
    try {
      return await call();
    } catch (err) {
      if (!passesWithTheGap(err) || waited >= opts.patienceMs || opts.halted?.()) throw err;
      opts.onRetry?.(err);
      await new Promise((r) => setTimeout(r, opts.retryMs));
    }
  }
}
