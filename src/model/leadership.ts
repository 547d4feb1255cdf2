// Who runs the loops among the controllers that share one store (STORE=etcd): exactly one, the
// leader, elected with an etcd lease (src/store/election.ts). With the embedded store there is
// one controller and it always leads. The HTTP layer only reads this: a follower forwards what
// only the leader can answer (agents, task actions, run logs) to the leader's advertised URL.

export interface LeaderView {
  /** This controller holds the leadership now. */
  isLeader(): boolean;
  /** The leader's API base URL as it advertised it (itself when leading); null while nobody
   * leads (between a leader's death and the next election). */
  leaderUrl(): string | null;
}

/** The one controller of an embedded store: always the leader. */
export const soleLeader = (url: () => string | null): LeaderView => ({ isLeader: () => true, leaderUrl: url });
