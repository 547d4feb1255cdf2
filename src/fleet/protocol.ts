// What a simulated machine can say to the master: the same conversation a real machine has
// (network boot, image fetch, agent reports, claiming and finishing node-level runs). In the
// lab it is wired in-process; the agent protocol over HTTP implements the same interface.
import type { AgentReport } from './types.js';
import type { AgentResult, LogLine } from '../tasks/types.js';

export interface BootAnswer {
  nodeId: string;
  hostname: string;
  /** install: fetch the image and install; local: boot what is on the system disk; wait: no
   * image to install yet, network-boot again a little later. */
  action: 'install' | 'local' | 'wait';
  /** Only with `install`, and only while no agent has used it: the agent's first secret. */
  credential?: { username: string; secret: string };
}

/** What an agent may know of one of its node's runs: whether to keep going. */
export interface AgentRunState {
  state: 'pending' | 'running' | 'completed' | 'failed' | 'canceled';
  /** Canceled, or failed under the agent (timed out): it should stop. */
  canceled: boolean;
}

export interface ClaimedRun {
  id: string;
  taskName: string;
  args: Record<string, unknown>;
}

export interface MasterLink {
  pxeBoot(mac: string): Promise<BootAnswer>;
  fetchImage(nodeId: string): Promise<void>;
  report(nodeId: string, report: AgentReport): Promise<void>;
  /** Long-poll: the oldest pending run for the node, or null after waitMs. `carrying`: the
   * runs the agent is carrying out as it claims (AgentQueue.claim says what it is for). */
  claim(nodeId: string, waitMs: number, signal: AbortSignal, carrying?: readonly string[]): Promise<ClaimedRun | null>;
  log(nodeId: string, runId: string, lines: LogLine[]): Promise<void>;
  finish(nodeId: string, runId: string, result: AgentResult): Promise<void>;
  /** The node's keyrings, as its agent fetches them for a Ceph step (the HTTP link only). */
  keyrings?(nodeId: string): Promise<Array<{ entity: string; keyring: string }>>;
}
