// A Node document → the node's desired spec and its disks' OSD flags. The machine is found by
// MAC or hostname, its disks by serial, device path or a selector; ids stay Quarry's. What is
// not there yet (a machine that has not booted, disks not reported) is pending, not an error.
import { DAEMONS, NODE_DAEMON_TYPES, type NodeDaemonType } from '../catalogue/index.js';
import type { FieldError } from '../errors.js';
import { crushLevelsOf, labelErrors } from '../model/crush.js';
import { declarePower } from '../model/node-power.js';
import { OsdRemoval, type DeviceClass, type DiskSpec, type NodeSpec } from '../model/kinds.js';
import {
  DiskReason,
  declareReasons,
  diskReasons,
  isOsdDestroyed,
  isOsdGone,
  isRemovalRequested,
  type DiskDoc,
  type NodeDoc,
} from '../model/operations.js';
import { sizeBytes } from '../model/spec-inputs.js';
import type { SpecDoc } from './parse.js';
import type { Desired, DocResolution, Pending } from './types.js';
import type { World } from './world.js';
import { bmcFromDoc, type BmcDocInput } from './bmc-input.js';
import { PendingReason } from './pending.js';

type Present = { state: 'present' | 'absent' };
type DiskRef = { serial?: string; path?: string };
type Selector = DiskRef &
  Present & {
    all?: true;
    rotational?: boolean;
    interface?: string;
    minSize?: number | string;
    maxSize?: number | string;
    replaces?: string;
    deviceClass?: DeviceClass;
  };
interface NodeInput {
  match: { mac?: string; hostname?: string };
  role: NodeSpec['role'];
  power: NodeSpec['power'];
  image: string | null;
  daemons: { [T in NodeDaemonType]?: Present & { disk?: DiskRef } };
  osds: Selector[];
  adminKeyring?: boolean;
  bmc?: BmcDocInput;
  fencing?: 'none' | 'bmc';
  maintenance?: boolean;
}

export const NODE_FIELDS = ['role', 'power', 'image', 'daemons', 'maintenance'];
/** The fields of a Disk a file owns once it names the disk: whether it has an OSD, its removal,
 * its device class and the disk it replaces. */
export const DISK_FIELDS = ['osd', 'osdRemoval', 'deviceClass', 'replaces']; // catalogue-exempt: the field Disk.spec.osd
/** Node daemons the file turns on or off alone; the one that needsDisk (the monitor) is chosen
 * with its disk below. */
const SIMPLE = NODE_DAEMON_TYPES.filter((t) => !DAEMONS[t].needsDisk);
// Eligibility reasons that do not hold back a disk the file already has an OSD on: its own OSD,
// and the filesystem that OSD's BlueStore is (a real agent reports it as one, so `all` would
// otherwise stop naming every disk it had made an OSD of, orphaning them all).
const OWN = new Set<string>([DiskReason.holdsOsd, DiskReason.monitorDisk, DiskReason.hasFilesystem]);

export function findNode(world: World, match: NodeInput['match']): NodeDoc | undefined {
  const mac = match.mac?.toLowerCase().replace(/-/g, ':');
  return world.nodes.find((n) => (mac ? n.spec.macs.includes(mac) : n.spec.hostname === match.hostname));
}

const refMatches = (d: DiskDoc, r: DiskRef): boolean =>
  r.serial !== undefined ? d.spec.serial === r.serial : d.status.devicePath === r.path;
const refText = (r: DiskRef): string => (r.serial !== undefined ? `serial ${r.serial}` : `path ${r.path}`);

function filtersMatch(d: DiskDoc, s: Selector): boolean {
  const bytes = d.status.capacityBytes ?? 0;
  if (s.rotational !== undefined && d.status.rotational !== s.rotational) return false;
  if (s.interface !== undefined && d.status.interface !== s.interface) return false;
  if (s.minSize !== undefined && bytes < sizeBytes(s.minSize)) return false;
  if (s.maxSize !== undefined && bytes > sizeBytes(s.maxSize)) return false;
  return true;
}

/** `levels`: the CRUSH levels in force (the file's Cluster document may change them); a label
 * named by one is a CRUSH bucket name and must be one Ceph takes. */
export function resolveNode(
  doc: SpecDoc,
  world: World,
  imageId: (given: string) => string | null,
  levels: readonly string[] = crushLevelsOf(world.cluster?.spec),
): DocResolution {
  const input = doc.spec as unknown as NodeInput;
  const pending: Pending[] = [];
  const errors: FieldError[] = labelErrors(doc.labels, levels, new Set(world.nodes.map((n) => n.spec.hostname)));
  if (errors.length) return { desired: [], pending, errors };
  // Once the node is found, what it waits for names it by id too.
  const waitAs =
    (id: string | undefined) =>
    (reason: string, message: string): void =>
      void pending.push({ document: doc.index, kind: 'Node', name: doc.name, reason, message, ...(id ? { id } : {}) });
  const node = findNode(world, input.match);
  if (!node) {
    waitAs(undefined)(
      PendingReason.NodeNotDiscovered,
      `no machine with ${input.match.mac ? `MAC ${input.match.mac}` : `hostname ${input.match.hostname}`} has booted yet`,
    );
    return { desired: [], pending, errors };
  }
  const wait = waitAs(node.id);
  const image = input.image === null ? null : imageId(input.image);
  if (input.image !== null && image === null)
    errors.push({ path: '/spec/image', message: `no image ${input.image} in the catalog or on the master` });
  const disks = world.disks
    .filter((d) => d.spec.nodeId === node.id)
    .sort((a, b) => (a.status.devicePath ?? '').localeCompare(b.status.devicePath ?? ''));
  input.osds.forEach((s, i) => {
    const n = [s.serial, s.path, s.all].filter((x) => x !== undefined).length;
    if (n !== 1) errors.push({ path: `/spec/osds/${i}`, message: 'give exactly one of serial, path and all' });
  });
  const daemons: NodeSpec['daemons'] = {};
  for (const d of SIMPLE) {
    const entry = input.daemons[d];
    // Its params (none for today's kinds) go into the spec; `state` is the file's, not the spec's.
    if (entry?.state === 'present') daemons[d] = Object.fromEntries(Object.entries(entry).filter(([k]) => k !== 'state')) as never;
  }
  // Read from Quarry's environment at each apply: a changed variable reaches the store.
  const bmc = input.bmc ? bmcFromDoc(input.bmc, process.env, errors) : undefined;
  const mon = monitor(input, node, disks, errors, wait);
  if (mon) daemons.mon = mon;
  if (errors.length) return { desired: [], pending, errors };
  // `power` is acted on only when it changes against the stored power (src/model/node-power.ts).
  const spec: NodeSpec = declarePower(node.spec, { ...node.spec, role: input.role, power: input.power, image, daemons });
  // An admin node only when the file says so; a file that names the flag owns it.
  if (input.adminKeyring === true) spec.adminKeyring = true;
  else if (input.adminKeyring === false) delete spec.adminKeyring;
  // Power control likewise: a file that names `bmc` or `fencing` owns it.
  if (bmc) spec.bmc = bmc;
  if (input.fencing === 'bmc') spec.fencing = 'bmc';
  else if (input.fencing === 'none') delete spec.fencing;
  // The file's whether it names it or not (NODE_FIELDS): a line removed ends the maintenance.
  if (input.maintenance === true) spec.maintenance = true;
  else delete spec.maintenance;
  const fields = [
    ...NODE_FIELDS,
    ...(input.adminKeyring === undefined ? [] : ['adminKeyring']),
    ...(input.bmc === undefined ? [] : ['bmc']),
    ...(input.fencing === undefined ? [] : ['fencing']),
  ];
  const desired: Desired[] = [{ kind: node.kind, id: node.id, name: node.name, spec, document: doc.index, fields, labels: doc.labels }];
  const probe = { ...node, spec } as NodeDoc;
  const chosen = wantedDisks(input.osds, disks, probe, world.cluster?.spec.fsid, errors, wait);
  if (errors.length) return { desired: [], pending, errors };
  // A monitor being removed still has its store on one of these disks: no new OSD until it stops.
  const monStopping = !daemons.mon && node.status.daemons?.mon === true;
  let held = 0;
  for (const [id, want] of chosen) {
    const d = disks.find((x) => x.id === id)!;
    if (monStopping && want.osd && !d.spec.osd && (d.status.osdId ?? null) === null) {
      held++;
      continue;
    }
    desired.push({ kind: d.kind, id, name: d.name, spec: diskSpec(d.spec, want), document: doc.index, fields: DISK_FIELDS });
  }
  if (held)
    wait(
      PendingReason.MonitorStopping,
      `${held} new OSD(s) on ${node.spec.hostname} wait until its removed monitor has stopped: its store is on one of these disks`,
    );
  return { desired, pending, errors };
}

/** What a file wants of one disk: an OSD (created or adopted), or none, with the removal asked. */
type DiskWant = { osd: true; deviceClass?: DeviceClass; replaces?: string } | { osd: false; removal: OsdRemoval | undefined };

/** The disk's spec as the file wants it; the fields it does not give are unset (it owns them). */
function diskSpec(cur: DiskSpec, want: DiskWant): DiskSpec {
  const { osdRemoval: _r, deviceClass: _c, replaces: _p, ...base } = cur;
  if (want.osd) {
    return {
      ...base,
      osd: true, // catalogue-exempt: the field Disk.spec.osd, not the daemon type
      ...(want.deviceClass ? { deviceClass: want.deviceClass } : {}),
      ...(want.replaces ? { replaces: want.replaces } : {}),
    };
  }
  const { osdRemoval: _, ...kept } = cur;
  return { ...kept, osd: false, ...(want.removal ? { osdRemoval: want.removal } : {}) };
}

/** `state: absent`: the OSD on it is removed; a disk with none has nothing to remove (a finished
 * removal stays as it is, so the file does not flip it). */
const absentWant = (d: DiskDoc): DiskWant => ({
  osd: false,
  removal: d.spec.osd || ((d.status.osdId ?? null) !== null && !isOsdGone(d)) ? OsdRemoval.remove : d.spec.osdRemoval,
});

/** The disk a `replaces` names: its OSD is destroyed keeping its id. One destroyed already (a
 * disk that died) is said to be replaced, so its id waits for the new disk; one purged or with
 * no OSD keeps what it has. */
const replacedWant = (d: DiskDoc): DiskWant => ({
  osd: false,
  removal:
    isOsdDestroyed(d) || ((d.spec.osd || (d.status.osdId ?? null) !== null) && !isOsdGone(d)) ? OsdRemoval.replace : d.spec.osdRemoval,
});

/** Each disk the selectors name, with what the file wants of it. An explicit `state: absent`
 * wins, then a replacement's old disk, then a disk named by serial or path, then `all`. */
function wantedDisks(
  selectors: Selector[],
  disks: DiskDoc[],
  node: NodeDoc,
  fsid: string | undefined,
  errors: FieldError[],
  wait: (r: string, m: string) => void,
): Map<string, DiskWant> {
  const at = (i: number, field = '') => `/spec/osds/${i}${field}`;
  const host = node.spec.hostname;
  // The old disk of each `replaces`, checked first: a wrong one refuses the file.
  const olds = new Map<number, DiskDoc>();
  selectors.forEach((s, i) => {
    if (s.replaces === undefined) return;
    if (s.all) return void errors.push({ path: at(i, '/replaces'), message: 'replaces names one disk: give serial or path, not all' });
    if (s.state === 'absent')
      return void errors.push({ path: at(i, '/replaces'), message: 'a disk that is absent replaces nothing; drop replaces or state' });
    const old = disks.find((d) => d.spec.serial === s.replaces);
    if (!old) return void errors.push({ path: at(i, '/replaces'), message: `node ${host} has no disk with serial ${s.replaces}` });
    if (refMatches(old, s)) return void errors.push({ path: at(i, '/replaces'), message: 'a disk cannot replace itself' });
    olds.set(i, old);
  });
  // A disk a replacement names (old or new) may be named by no other selector.
  const named = new Map<string, number>();
  const claim = (id: string, i: number, replacing: boolean) => {
    const other = named.get(id);
    if (other === undefined) return void named.set(id, i);
    if (other === i) return;
    const involved = replacing || selectors[other]?.replaces !== undefined;
    if (involved) {
      const serial = disks.find((d) => d.id === id)?.spec.serial ?? id;
      errors.push({ path: at(i, replacing ? '/replaces' : ''), message: `serial ${serial} is also named by ${at(other)}` });
    }
  };
  selectors.forEach((s, i) => {
    if (s.all) return;
    for (const d of disks.filter((x) => refMatches(x, s))) claim(d.id, i, false);
    const old = olds.get(i);
    if (old) claim(old.id, i, true);
  });
  const wants = new Map<string, { rank: number; want: DiskWant }>();
  const put = (id: string, rank: number, want: DiskWant) => {
    const cur = wants.get(id);
    if (!cur || rank > cur.rank) wants.set(id, { rank, want });
  };
  // `all` takes neither a disk being replaced nor one whose OSD is being removed (by the API):
  // only naming it undoes a removal.
  const replaced = new Set([...olds.values()].map((d) => d.id));
  const leaving = (d: DiskDoc) => replaced.has(d.id) || (isRemovalRequested(d) && d.status.osd?.phase !== 'removed');
  selectors.forEach((s, i) => {
    const hits = disks.filter((d) => (s.all ? filtersMatch(d, s) && !leaving(d) : refMatches(d, s)));
    if (!s.all && hits.length === 0) wait('DiskNotSeen', `node ${host} has reported no disk with ${refText(s)}`);
    // What an `all` selector takes, and why it takes none of the others it matches.
    let taken = 0;
    const refused: string[] = [];
    for (const d of hits) {
      if (s.state === 'absent') {
        put(d.id, 3, absentWant(d));
        taken++;
        continue;
      }
      // A disk the file already has an OSD on keeps it; one holding an OSD of this cluster
      // (orphaned, or its BlueStore label) is adopted, its own OSD not holding it back.
      const blocking = declareReasons(d, node, fsid).filter((r) => !(d.spec.osd && OWN.has(r)));
      const old = olds.get(i);
      const want: DiskWant = {
        osd: true,
        ...(s.deviceClass ? { deviceClass: s.deviceClass } : {}),
        ...(old ? { replaces: old.id } : {}),
      };
      if (blocking.length === 0) {
        put(d.id, s.all ? 0 : 1, want);
        taken++;
      } else if (!s.all) wait('DiskNotEligible', `disk ${refText(s)} of ${host} cannot take an OSD: ${blocking.join(', ')}`);
      else refused.push(`${d.status.devicePath ?? d.spec.serial}: ${blocking.join(', ')}`);
    }
    // A selector that takes no disk is said, not silently a no-op; the disk may come later.
    if (s.all && taken === 0) wait(...selectorUnmatched(s, i, node, disks, refused));
    const old = olds.get(i);
    if (old) put(old.id, 2, replacedWant(old));
  });
  return new Map([...wants].map(([id, w]) => [id, w.want]));
}

const FILTERS = ['rotational', 'interface', 'minSize', 'maxSize'] as const;

/** `osds/1 { all: true, rotational: true, minSize: 1TB }`: the selector as the file gave it. */
const selectorText = (s: Selector, i: number): string =>
  `osds/${i} { ${['all: true', ...FILTERS.filter((k) => s[k] !== undefined).map((k) => `${k}: ${String(s[k])}`)].join(', ')} }`;

/** Why an `all` selector takes no disk: the node has reported none yet, none matches its
 * filters, or those that match cannot take an OSD (`refused`: each with its reasons). */
function selectorUnmatched(s: Selector, i: number, node: NodeDoc, disks: DiskDoc[], refused: string[]): [string, string] {
  const host = node.spec.hostname;
  const text = selectorText(s, i);
  if (disks.length === 0 && node.status.diskIds === undefined)
    return [PendingReason.DisksNotReported, `node ${host} has not reported its disks yet: ${text} waits for them`];
  if (refused.length)
    return [
      PendingReason.SelectorMatchesNothing,
      `${text} matches ${refused.length} disk(s) of ${host}, none of which can take an OSD: ${refused.join('; ')}`,
    ];
  return [
    PendingReason.SelectorMatchesNothing,
    `no disk of ${host} matches ${text} (${disks.length} disk(s) reported); a disk that matches later is taken`,
  ];
}

/** The monitor the file wants: the one the node has (its store stays on its disk), a named
 * disk, or the smallest eligible one; undefined when none is wanted or no disk is ready yet. */
function monitor(
  input: NodeInput,
  node: NodeDoc,
  disks: DiskDoc[],
  errors: FieldError[],
  wait: (r: string, m: string) => void,
): { diskId: string } | undefined {
  const want = input.daemons.mon;
  const have = node.spec.daemons.mon;
  // Not named and not `absent`: a monitor holds data, so it stays (and is reported orphaned).
  if (!want) return have;
  if (want.state === 'absent') return undefined;
  if (want.disk) {
    const d = disks.find((x) => refMatches(x, want.disk!));
    if (have) {
      if (d && d.id !== have.diskId)
        errors.push({
          path: '/spec/daemons/mon/disk',
          message: 'the monitor keeps its store on another disk; moving it is not supported (remove it with state: absent first)',
        });
      return have;
    }
    if (!d) {
      wait('DiskNotSeen', `node ${node.spec.hostname} has reported no disk with ${refText(want.disk)} for its monitor`);
      return undefined;
    }
    const reasons = diskReasons(d, node);
    if (reasons.length) {
      wait('DiskNotEligible', `the monitor disk ${refText(want.disk)} is not eligible: ${reasons.join(', ')}`);
      return undefined;
    }
    return { diskId: d.id };
  }
  if (have) return have;
  const candidates = disks.filter((d) => !d.spec.osd && diskReasons(d, node).length === 0);
  candidates.sort((a, b) => (a.status.capacityBytes ?? 0) - (b.status.capacityBytes ?? 0));
  if (!candidates[0]) {
    wait('NoMonitorDisk', `node ${node.spec.hostname} (${node.status.phase ?? 'discovered'}) has no eligible disk for its monitor yet`);
    return undefined;
  }
  return { diskId: candidates[0].id };
}
