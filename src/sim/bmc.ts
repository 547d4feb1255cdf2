// The lab's BMCs: one per lab machine, on an address of its own, answering the master's IPMI
// calls as ipmitool would see them. Power follows the machine: off after a shutdown, and a
// power-on boots it (over the network, as a real one). Faults: a BMC that does not answer.
import { BmcError, DEFAULT_BMC_PORT, type BmcApi, type BmcCall, type BmcTarget, type PowerState } from '../clients/bmc.js';
import type { SimMachine } from './machine.js';

/** The BMC address of the lab machine with this 1-based index (TEST-NET-2, 198.51.100.0/24, and on). */
export function labBmcAddress(index: number): string {
  return `198.51.${100 + Math.floor(index / 250)}.${1 + (index % 250)}`;
}

export const LAB_BMC_USER = 'quarry';
/** Each lab BMC's password (known to tests, as a sticker on a real machine would be). */
export const labBmcPassword = (index: number): string => `lab-bmc-${index}`;

/** What a lab BMC is, as a spec declares it. */
export const labBmcTarget = (index: number): BmcTarget => ({
  address: labBmcAddress(index),
  port: DEFAULT_BMC_PORT,
  username: LAB_BMC_USER,
  password: labBmcPassword(index),
});

export interface SimBmcFaults {
  /** Addresses whose BMC does not answer (a cable out, a dead BMC). */
  unreachable: Set<string>;
  /** Addresses whose machine hangs in its soft power-off: the power reads on until it is cut. */
  hangOnPowerOff: Set<string>;
  /** While set, a power-cycle cuts the power and powers on only once this settles (a machine
   * slow to come back through its firmware): tests hold one fence's lease for as long as needed. */
  cycleHeld?: Promise<void>;
}

export class SimBmcs implements BmcApi {
  readonly faults: SimBmcFaults = { unreachable: new Set(), hangOnPowerOff: new Set() };
  /** Every call, in order, without the password: what tests assert on. */
  readonly calls: Array<{ address: string; verb: 'status' | 'on' | 'off' | 'cycle' }> = [];
  private machines: () => readonly SimMachine[] = () => [];

  /** The lab's machines, once the lab exists (the master's loops are made before it). */
  attach(machines: () => readonly SimMachine[]): void {
    this.machines = machines;
  }

  powerStatus(t: BmcTarget, call: BmcCall): Promise<PowerState> {
    const m = this.login(t, 'status', call);
    return Promise.resolve(m.powered || this.faults.hangOnPowerOff.has(t.address) ? 'on' : 'off');
  }

  powerOn(t: BmcTarget, call: BmcCall): Promise<void> {
    this.login(t, 'on', call).powerOn();
    return Promise.resolve();
  }

  powerOff(t: BmcTarget, call: BmcCall): Promise<void> {
    this.login(t, 'off', call).powerOff();
    this.faults.hangOnPowerOff.delete(t.address);
    return Promise.resolve();
  }

  async powerCycle(t: BmcTarget, call: BmcCall): Promise<void> {
    const m = this.login(t, 'cycle', call);
    m.powerOff();
    if (this.faults.cycleHeld) await this.faults.cycleHeld;
    m.powerOn();
  }

  /** Holds every power-cycle between its power cut and its power-on until the answer is called. */
  holdCycles(): () => void {
    let release!: () => void;
    this.faults.cycleHeld = new Promise((r) => (release = r));
    return () => {
      delete this.faults.cycleHeld;
      release();
    };
  }

  private login(t: BmcTarget, verb: 'status' | 'on' | 'off' | 'cycle', call: BmcCall): SimMachine {
    this.calls.push({ address: t.address, verb });
    call.log?.('info', `ipmitool -I lanplus -H ${t.address} -p ${t.port} -U ${t.username} -E chassis power ${verb}`);
    const m = this.machines().find((x) => labBmcAddress(x.spec.index) === t.address);
    // ipmitool says the same for no BMC, an unreachable one and a refused login.
    const noSession = 'Error: Unable to establish IPMI v2 / RMCP+ session';
    if (!m || t.port !== DEFAULT_BMC_PORT || this.faults.unreachable.has(t.address)) throw new BmcError(t, `no answer: ${noSession}`);
    if (t.username !== LAB_BMC_USER || t.password !== labBmcPassword(m.spec.index))
      throw new BmcError(t, `login refused (check the user name and password): ${noSession}`);
    return m;
  }
}
