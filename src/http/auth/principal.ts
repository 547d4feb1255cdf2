// Who is calling. A user logs in with a password; a node's agent logs in with its node's
// credential (username `agent:<nodeId>`) and gets the same cookies, but a principal bound to
// that one node: it may call the agent operations and nothing a user may.
import type { TokenRef } from './api-tokens.js';
import type { PublicUser, UserDoc } from './users.js';

/** A user: set on ctx.state.principal by the route layer for user routes. */
export interface Principal {
  user: PublicUser;
  doc: UserDoc;
  /** The login session; `token:<id>` for a request made with an API token (api-tokens.ts). */
  sessionId: string;
  /** Set when the request came with an API token: its scope limits what the route layer lets
   * through, and the audit names it. */
  token?: TokenRef;
}

export interface AgentPrincipal {
  kind: 'agent';
  nodeId: string;
  /** `agent:<nodeId>`; also the subject of its session and tokens. */
  username: string;
  sessionId: string;
  /** False until the agent replaced the secret it was installed with; until then it may
   * only rotate it. */
  rotated: boolean;
}

export type Caller = Principal | AgentPrincipal;

export const isAgent = (caller: Caller | null | undefined): caller is AgentPrincipal =>
  (caller as AgentPrincipal | null | undefined)?.kind === 'agent';

/**
 * Node secrets (keyrings) may be read by an admin, for any node, and by a node's own agent,
 * for its node only, once it has rotated its first secret. Other users may not.
 */
export function mayReadNodeSecrets(caller: Caller | null | undefined, nodeId: string): boolean {
  if (!caller) return false;
  if (isAgent(caller)) return caller.rotated && caller.nodeId === nodeId;
  return caller.user.isAdmin;
}
