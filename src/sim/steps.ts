// Node-level steps the simulated agent knows how to carry out. Later loops register theirs
// (creating an OSD, starting a monitor, ...) so the lab grows with the product.
import type { LogLevel } from '../tasks/types.js';
import type { MachineSpec } from './machines.js';

export interface StepContext {
  machine: MachineSpec;
  args: Record<string, unknown>;
  log(level: LogLevel, message: string): void;
  /** Ask the machine to reboot or power off once the step has been reported. */
  after(action: 'reboot' | 'poweroff'): void;
  /** This node's keyrings as the master hands them to its agent (GET /ceph/nodes/{id}/keyrings);
   * absent on the lab's in-process link, which carries no keys. */
  keyrings?: () => Promise<Array<{ entity: string; keyring: string }>>;
}

export type Step = (ctx: StepContext) => Promise<Record<string, unknown> | void>;

export function builtinSteps(): Map<string, Step> {
  return new Map<string, Step>([
    [
      'node.restart',
      async (ctx) => {
        ctx.log('info', 'systemctl reboot');
        ctx.after('reboot');
      },
    ],
    [
      'node.shutdown',
      async (ctx) => {
        ctx.log('info', 'systemctl poweroff');
        ctx.after('poweroff');
      },
    ],
  ]);
}
