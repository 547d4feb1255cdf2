// The wipe half of the disk loop, pure. `disk.wipe` bumps spec.wipeGeneration; the loop acts
// once per bump. A disk that holds data is wiped only after an operator says "yes" to a question
// naming the node, the device, its serial and what is on it; "no" leaves it untouched and the
// request is acknowledged as declined. A disk that holds an OSD, the monitor's store or the
// system is never wiped, whatever the request says: the API refuses that, and so does this
// plan, because the disk may have changed since the request was accepted.
import { Step } from '../../src/catalogue/index.js';
import type { ConditionInput } from '../../src/runtime/conditions.js';
import { isMonDisk, isOsdDisk, type DiskDoc, type NodeDoc } from '../../src/model/operations.js';
import { FAILED_AFTER, isActive, retry, type RunInfo } from '../shared/runs.js';
import { gateOf, graceWait, type Gate } from '../../src/runtime/loop-kit/index.js';

export const WipeTask = { confirm: Step.wipeConfirm, wipe: Step.wipe } as const;
export const WIPE_OPTIONS = ['yes', 'no'] as const;

export interface WipeObserved {
  disk: DiskDoc;
  node: NodeDoc | undefined;
  /** The newest question run and the newest node-level wipe of this disk. */
  confirmRun: RunInfo | null;
  wipeRun: RunInfo | null;
  now: number;
  retryBaseMs: number;
  startGraceMs: number;
}

export type WipeStep =
  | { kind: 'confirm'; attempt: number; args: { request: number; prompt: string } }
  | { kind: 'wipe'; attempt: number; args: { request: number; devicePath: string } };

export interface WipePlan {
  /** The `Wiped` condition to set; null leaves it as it is. */
  condition: ConditionInput | null;
  /** Set when the request is done with (wiped, declined, canceled): observedWipeGeneration. */
  ack: number | null;
  step: WipeStep | null;
  requeueAfterMs: number | null;
  gate: Gate | null;
  /** Why the wipe keeps failing, after FAILED_AFTER attempts; shown as Degraded. */
  failing: string | null;
}

const IDLE: WipePlan = { condition: null, ack: null, step: null, requeueAfterMs: null, gate: null, failing: null };
const wiped = (status: boolean, reason: string, message: string): ConditionInput => ({
  type: 'Wiped',
  status: status ? 'True' : 'False',
  reason,
  message,
});
const progress = (reason: string, message: string, over: Partial<WipePlan> = {}): WipePlan => ({
  ...IDLE,
  condition: wiped(false, reason, message),
  ...over,
});

/** Data an operator must agree to lose: a filesystem, or what an OSD once left there. */
export const holdsData = (d: DiskDoc): boolean =>
  d.status.hasFilesystem === true || d.status.osdUuid !== undefined || (d.status.osdId ?? null) !== null;

/** Why this disk is never wiped; null when it may be. */
export function wipeRefusal(d: DiskDoc, n: NodeDoc | undefined): string | null {
  if (d.status.isSystem) return 'it is the system disk';
  // A destroyed OSD's disk (replaced, maybe failing) may be wiped once nobody asks for an OSD on
  // it: its id lives on in Ceph, not on this disk. The question is still asked first.
  const done = d.status.osd?.phase === 'destroyed' || d.status.osd?.phase === 'replaced';
  if (isOsdDisk(d) && !(done && !d.spec.osd)) return d.status.osdId != null ? `it holds osd.${d.status.osdId}` : 'an OSD is desired on it';
  if (isMonDisk(d, n)) return "it holds the monitor's store";
  return null;
}

export function wipePrompt(d: DiskDoc, n: NodeDoc | undefined): string {
  const what = d.status.hasFilesystem ? 'a filesystem' : 'the data of an OSD';
  const model = [d.status.vendor, d.status.model].filter(Boolean).join(' ');
  return (
    `Wipe ${d.status.devicePath ?? '?'} on ${n?.spec.hostname ?? d.spec.nodeId} (serial ${d.spec.serial}${model ? `, ${model}` : ''})? ` +
    `It holds ${what}; everything on it will be lost.`
  );
}

export function planWipe(o: WipeObserved): WipePlan {
  const { disk, node } = o;
  const gen = disk.spec.wipeGeneration;
  if (gen <= (disk.status.observedWipeGeneration ?? 0)) return IDLE;
  const mine = (r: RunInfo | null): RunInfo | null => (r && r.args.request === gen ? r : null);
  const refusal = wipeRefusal(disk, node);
  if (refusal) return gate('WipeRefused', `wipe requested, but ${refusal}; Quarry never wipes it`);
  const phase = node?.status.phase ?? 'discovered';
  if (phase !== 'active')
    return gate('NodeNotActive', `wipe requested, but the node is ${node ? phase : 'unknown'}; nothing is done to it until it is active`);
  if (disk.status.present === false) return gate('DiskAbsent', `wipe requested, but the disk ${disk.spec.serial} is not present`);
  const wipeRun = mine(o.wipeRun);
  // Once a wipe of this request ran, the answer was yes (or no question was needed): never ask again.
  if (wipeRun || !holdsData(disk)) return wipePlan(o, gen, wipeRun);
  const confirm = mine(o.confirmRun);
  if (isActive(confirm)) return progress('AwaitingAnswer', `waiting for an operator to answer the question of run ${confirm!.id}`);
  if (confirm?.state === 'completed') {
    const answer = confirm.result?.answer;
    if (answer === 'yes') return wipePlan(o, gen, null);
    return {
      ...IDLE,
      ack: gen,
      condition: wiped(false, 'Declined', `the operator declined to wipe ${disk.status.devicePath ?? 'the disk'}; it was left untouched`),
    };
  }
  if (confirm?.state === 'canceled')
    return { ...IDLE, ack: gen, condition: wiped(false, 'Canceled', 'the wipe question was canceled; the disk was left untouched') };
  return runStep(o, 'confirm', confirm, 'asking before wiping a disk that holds data', { request: gen, prompt: wipePrompt(disk, node) });
}

/** The node-level wipe; done when the agent reports the disk without a filesystem. */
function wipePlan(o: WipeObserved, gen: number, run: RunInfo | null): WipePlan {
  const devicePath = o.disk.status.devicePath ?? '';
  if (run?.state === 'canceled')
    return { ...IDLE, ack: gen, condition: wiped(false, 'Canceled', `the wipe run was canceled; ${devicePath} may be partly wiped`) };
  if (run?.state === 'completed') {
    if (o.disk.status.hasFilesystem === false) return { ...IDLE, ack: gen, condition: wiped(true, 'Wiped', `${devicePath} was wiped`) };
    const wait = graceWait(run.completedAt ?? o.now, o.now, o.startGraceMs);
    if (wait !== null)
      return progress('WaitingForAgent', `wiped; waiting for the agent to report ${devicePath} empty`, { requeueAfterMs: wait });
    // The agent still sees a filesystem after its grace: the wipe did not take; wipe again.
    return {
      ...progress('Wiping', `the agent still reports a filesystem on ${devicePath}; wiping again`),
      step: { kind: 'wipe', attempt: run.attempt + 1, args: { request: gen, devicePath } },
    };
  }
  return runStep(o, 'wipe', run, `wiping ${devicePath}`, { request: gen, devicePath });
}

function runStep<K extends WipeStep['kind']>(
  o: WipeObserved,
  kind: K,
  last: RunInfo | null,
  message: string,
  args: Extract<WipeStep, { kind: K }>['args'],
): WipePlan {
  const reason = kind === 'confirm' ? 'Asking' : 'Wiping';
  if (isActive(last)) return progress(reason, `${message} (run ${last!.id})`);
  const r = retry(last, o.now, o.retryBaseMs);
  const failed = last !== null && last.state === 'failed';
  const why = failed ? `${message}; attempt ${last.attempt} failed: ${last.error ?? 'unknown error'}` : message;
  const failing = failed && last.attempt >= FAILED_AFTER ? why : null;
  if (r.kind === 'wait') return progress('RetryBackoff', why, { requeueAfterMs: r.ms + 1, failing });
  return progress(reason, why, { step: { kind, attempt: r.attempt, args } as WipeStep, failing });
}

function gate(reason: string, message: string): WipePlan {
  return { ...IDLE, condition: wiped(false, reason, message), gate: gateOf(reason, message) };
}
