// Names wherever ids are: a node by hostname, YAML name, MAC, id or id prefix; a disk by serial,
// `<node>:<device path>`, its YAML name (`<hostname>/<serial>`), id or id prefix; a run or a
// question by id prefix. Unknown and ambiguous names are errors that list the candidates.
import type { ApiClient } from './client.js';
import { CliError } from './errors.js';
import type { DiskView, NicView, NodeView, QuestionView, RunView } from './views.js';

/** Shown at most this many candidates in an error. */
const SHOWN = 12;

function pick<T>(what: string, name: string, all: T[], label: (x: T) => string, matches: (x: T) => boolean): T {
  const found = all.filter(matches);
  if (found.length === 1) return found[0]!;
  const list = (xs: T[]) => xs.slice(0, SHOWN).map(label).join(', ') + (xs.length > SHOWN ? `, … (${xs.length - SHOWN} more)` : '');
  if (found.length === 0) throw new CliError(`no ${what} named ${name}${all.length ? `; known: ${list(all)}` : ` (there are none)`}`);
  throw new CliError(`${name} names ${found.length} ${what}s: ${list(found)}; say which`);
}

const isPrefix = (id: string, name: string): boolean =>
  name.length >= 4 && /^[0-9a-f-]+$/i.test(name) && id.toLowerCase().startsWith(name.toLowerCase());
const nodeLabel = (n: NodeView): string => (n.name && n.name !== n.hostname ? `${n.hostname} (${n.name})` : n.hostname);

/** Exact names first (id, hostname, YAML name, MAC); an id prefix only when nothing is exact. */
export function matchNode(name: string, nodes: NodeView[], nics: NicView[] = []): NodeView {
  const lower = name.toLowerCase();
  const byMac = new Set(nics.filter((n) => n.mac.toLowerCase() === lower).map((n) => n.nodeId));
  const exact = (n: NodeView) => n.id === lower || n.hostname === name || n.name === name || byMac.has(n.id);
  if (nodes.some(exact)) return pick('node', name, nodes, nodeLabel, exact);
  return pick('node', name, nodes, nodeLabel, (n) => isPrefix(n.id, name));
}

const diskLabel = (d: DiskView): string => `${d.nodeHostname}:${d.devicePath} (${d.serial})`;

export function matchDisk(name: string, disks: DiskView[], nodes: NodeView[] = []): DiskView {
  const colon = name.lastIndexOf(':/');
  if (colon > 0) {
    const host = name.slice(0, colon);
    const path = name.slice(colon + 1);
    const node = matchNode(host, nodes.length ? nodes : uniqueHosts(disks), []);
    return pick('disk', name, disks, diskLabel, (d) => d.nodeId === node.id && d.devicePath === path);
  }
  const exact = (d: DiskView) =>
    d.id === name.toLowerCase() || d.serial === name || `${d.nodeHostname}/${d.serial}` === name || d.devicePath === name;
  if (disks.some(exact)) return pick('disk', name, disks, diskLabel, exact);
  return pick('disk', name, disks, diskLabel, (d) => isPrefix(d.id, name));
}

/** The nodes the disks name, when the node list was not asked for. */
function uniqueHosts(disks: DiskView[]): NodeView[] {
  const seen = new Map<string, NodeView>();
  for (const d of disks) seen.set(d.nodeId, { id: d.nodeId, hostname: d.nodeHostname } as NodeView);
  return [...seen.values()];
}

export function matchRun(name: string, runs: RunView[]): RunView {
  return pick(
    'run',
    name,
    runs,
    (r) => `${r.id.slice(0, 8)} ${r.taskName}`,
    (r) => r.id === name || isPrefix(r.id, name),
  );
}

/** A question by its id or prefix, or by its run's. */
export function matchQuestion(name: string, questions: QuestionView[]): QuestionView {
  const label = (q: QuestionView) => `${q.id.slice(0, 8)} (${q.taskName}: ${q.prompt.slice(0, 60)})`;
  const own = (q: QuestionView) => q.id === name || isPrefix(q.id, name);
  if (questions.some(own)) return pick('pending question', name, questions, label, own);
  return pick('pending question', name, questions, label, (q) => q.runId === name || isPrefix(q.runId, name));
}

/** The API's lists, fetched once per command. */
export class Lookup {
  private nodesP: Promise<NodeView[]> | null = null;
  private nicsP: Promise<NicView[]> | null = null;
  private disksP: Promise<DiskView[]> | null = null;

  constructor(private readonly api: ApiClient) {}

  nodes(): Promise<NodeView[]> {
    return (this.nodesP ??= this.api.get<NodeView[]>('/nodes/details'));
  }

  nics(): Promise<NicView[]> {
    return (this.nicsP ??= this.api.get<NicView[]>('/nics'));
  }

  disks(): Promise<DiskView[]> {
    return (this.disksP ??= this.api.get<DiskView[]>('/disks'));
  }

  /** A run's target by name: a node's hostname, a disk's node:/dev/path; null for others. */
  async targetNames(): Promise<(id: string) => string | null> {
    const [nodes, disks] = await Promise.all([this.nodes(), this.disks()]);
    const names = new Map<string, string>([
      ...nodes.map((n): [string, string] => [n.id, n.hostname]),
      ...disks.map((d): [string, string] => [d.id, `${d.nodeHostname}:${d.devicePath}`]),
    ]);
    return (id) => names.get(id) ?? null;
  }

  async node(name: string): Promise<NodeView> {
    const [nodes, nics] = await Promise.all([this.nodes(), /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i.test(name) ? this.nics() : []]);
    return matchNode(name, nodes, nics);
  }

  async disk(name: string): Promise<DiskView> {
    const [disks, nodes] = await Promise.all([this.disks(), name.includes(':/') ? this.nodes() : []]);
    return matchDisk(name, disks, nodes);
  }

  async run(name: string): Promise<RunView> {
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(name)) return this.api.get<RunView>(`/task/run/${name}`);
    return matchRun(name, await this.api.get<RunView[]>('/task/runs/recent?limit=1000'));
  }

  async question(name: string): Promise<QuestionView> {
    return matchQuestion(name, await this.api.get<QuestionView[]>('/task/questions/pending'));
  }
}
