// Every node-level step a real agent carries out, under the names the loops use (and the lab's
// simulated agents implement): src/sim/ceph/steps.ts is the same list, simulated.
import type { AgentStep } from './context.js';
import { restartDaemon, startMds, startMgr, startRgw, stopRgw } from './daemons.js';
import { bootstrapMon, joinMon, removeMon } from './mon.js';
import { createOsd, wipeDisk } from './osd.js';

export type { AgentStep, AgentStepContext } from './context.js';

export function agentSteps(): Map<string, AgentStep> {
  return new Map<string, AgentStep>([
    ['ceph.mon.bootstrap', bootstrapMon],
    ['ceph.mon.join', joinMon],
    ['ceph.mon.remove', removeMon],
    ['ceph.mgr.start', startMgr],
    ['ceph.mds.start', startMds],
    ['ceph.rgw.start', startRgw],
    ['ceph.rgw.stop', stopRgw],
    ['ceph.osd.create', createOsd],
    ['ceph.daemon.restart', restartDaemon],
    ['disk.wipe', wipeDisk],
  ]);
}
