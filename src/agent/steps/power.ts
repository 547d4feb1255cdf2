// node.restart and node.shutdown on a real node: the step itself only says what comes. The agent
// runs the machine's reboot or poweroff command (AGENT_REBOOT_COMMAND / AGENT_POWEROFF_COMMAND)
// once the run is reported completed (agent.ts, after the catalogue's `power`), so the run is
// never lost with the boot. The daemons stop with the machine, as its service manager stops them;
// the master admitted the step under a lease of the disruption budget before sending it.
import type { AgentStepOf } from './context.js';

export const restartNode: AgentStepOf<'node.restart'> = async (ctx) => {
  ctx.log('info', 'the machine reboots once this run is reported completed');
  return undefined;
};

export const shutdownNode: AgentStepOf<'node.shutdown'> = async (ctx) => {
  ctx.log('info', 'the machine powers off once this run is reported completed');
  return undefined;
};
