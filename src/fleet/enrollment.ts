// Enrollment: who may become a node and receive an install credential. A machine found by
// network boot is `discovered` and unapproved; it gets nothing but a wait-and-ask-again script
// until an admin approves it (node.approve), or until a spec names it and it boots from the
// address the DHCP server Quarry runs leased to its MAC. An approved node's install credential
// is bound to the boot request's address (which must be its lease where Quarry knows one), is
// good for a short while and one use, and a second party's use of it is a conflict that takes
// the approval back. Pure: the boot route gathers the facts and commits what this decides.
import type { Doc } from '../model/document.js';
import type { NodeSpec, NodeStatusFields } from '../model/kinds.js';
import { isNodeApproved } from '../model/operations.js';

type NodeDoc = Doc<NodeSpec, NodeStatusFields>;

/** Approved, or stored before enrollment existed and its agent has reported (its bootId). */
export const isApproved = isNodeApproved;

/** A spec in the watched folder declares this node (it matched the node's MAC, or the hostname
 * Quarry derived from it) and still owns it. */
export function declaredBySpec(node: Pick<NodeDoc, 'metadata'>): boolean {
  const s = node.metadata.source;
  return !!s && s.type === 'file' && typeof s.file === 'string' && s.orphaned !== true;
}

/** The node's install credential as enrollment needs to know it. */
export interface CredentialView {
  /** pending: issued, no login yet; claimed: its first login happened; revoked: conflict. */
  state: 'pending' | 'claimed' | 'revoked';
  boundAddress: string | null;
  claimedBy: string | null;
  /** A pending credential past its TTL (it is deleted, and a new one may be issued). */
  expired: boolean;
}

export interface BootFacts {
  /** The boot request's source address. */
  address: string;
  /** The MAC's address in the lease book of a DHCP server Quarry runs; null when none knows it. */
  lease: string | null;
  credential: CredentialView | null;
  imageAvailable: boolean;
  /** Approve a spec-declared node booting from its lease (AUTO_APPROVE_DECLARED). */
  autoApproveDeclared: boolean;
}

export type EnrollmentVerdict =
  | { kind: 'proceed'; approve: boolean }
  /** Not approved (yet): the machine waits and asks again. */
  | { kind: 'unapproved'; reason: string }
  /** Approved, but this request may not install: another address than the lease, or a
   * credential bound elsewhere. Nothing is created, nothing counted. */
  | { kind: 'refused'; reason: string }
  /** The credential was claimed from another address than this legitimate boot's. */
  | { kind: 'conflict'; reason: string };

/** Whether this boot request may proceed to the ordinary boot decision, and whether it approves
 * the node on the way. Reasons are plain words (they go into iPXE `echo` lines). */
export function enrollmentVerdict(node: NodeDoc, f: BootFacts): EnrollmentVerdict {
  const fromLease = f.lease !== null && f.address === f.lease;
  let approve = false;
  if (!isApproved(node)) {
    if (!(f.autoApproveDeclared && declaredBySpec(node) && fromLease))
      return { kind: 'unapproved', reason: 'waiting for approval by an admin' };
    approve = true;
  }
  // Where Quarry's DHCP server leased this MAC an address, only that address speaks for it.
  if (f.lease !== null && !fromLease)
    return { kind: 'refused', reason: 'this boot request did not come from the address leased to this MAC' };
  const c = f.credential;
  if (c?.state === 'claimed' && c.claimedBy !== null && c.claimedBy !== f.address) {
    // Without a lease book, a boot from anywhere must not flag an installed node that reports:
    // only a machine still being installed (or one proven by its lease) raises the conflict.
    if (node.status.bootId === undefined || fromLease)
      return { kind: 'conflict', reason: 'the install credential of this node was claimed from another address' };
  }
  if (c?.state === 'pending' && !c.expired && c.boundAddress !== null && c.boundAddress !== f.address) {
    return { kind: 'refused', reason: 'an install credential is bound to another address until it expires' };
  }
  return { kind: 'proceed', approve };
}

/** An installed node boots its disk only while it has a credential its installed agent can
 * use; after a conflict revoked it (and an admin approved again), it installs anew. */
export const hasUsableCredential = (c: CredentialView | null): boolean => c !== null && c.state !== 'revoked';
