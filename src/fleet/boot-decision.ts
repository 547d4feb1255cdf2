// What a machine that network-boots is told to do, from its node's desired and observed state.
// The HTTP boot endpoint and the in-process lab link both decide here, so they never differ.
import type { Doc } from '../model/document.js';
import type { NodeSpec, NodeStatusFields } from '../model/kinds.js';
import { hasUsableCredential, type CredentialView } from './enrollment.js';

/** The node loop sets this condition; while it is True the machine is sent no installer. */
export const BOOT_LOOP = 'BootLoop';

/** install: boot the installer; local: boot the installed system; wait: no image to install
 * yet, ask again later; bootloop: too many boots, boot locally until an operator acts. */
export type BootAction = 'install' | 'local' | 'wait' | 'bootloop';

export interface BootDecision {
  action: BootAction;
  /** One line for the machine's console and the logs. */
  reason: string;
  /** How long a waiting machine sleeps before it asks again (the default when absent). */
  retrySeconds?: number;
}

export const inBootLoop = (status: NodeStatusFields): boolean =>
  (status.conditions ?? []).some((c) => c.type === BOOT_LOOP && c.status === 'True');

/** `credential`: the node's install credential when the caller knows it (the boot route does);
 * an installed node whose credential was revoked must install again. Approval is decided before
 * (enrollment.ts): this is the decision for a machine that may boot. */
export function decideBoot(
  node: Doc<NodeSpec, NodeStatusFields>,
  imageAvailable: boolean,
  credential?: CredentialView | null,
): BootDecision {
  const { status } = node;
  // Reasons go into iPXE `echo` lines: plain words only.
  if (inBootLoop(status))
    return { action: 'bootloop', reason: 'in a boot loop, booting the local disk (an operator resets it with node.restart)' };
  // A node whose agent has reported once has an installed system to boot.
  if (status.bootId && (credential === undefined || hasUsableCredential(credential)))
    return { action: 'local', reason: 'installed: booting from the local disk' };
  if (!imageAvailable) return { action: 'wait', reason: 'no boot image is available yet' };
  return { action: 'install', reason: node.spec.image ? `installing image ${node.spec.image}` : 'installing the default image' };
}
