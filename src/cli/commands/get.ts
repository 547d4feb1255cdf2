// get <kind>: one line per object, in aligned columns; -o json|yaml prints the API's answer.
import { Argument, Option, type Command } from 'commander';
import type { ApiClient } from '../client.js';
import { clientFor, type Io } from '../context.js';
import { Lookup } from '../resolve.js';
import { OUTPUTS, age, bytes, dash, outputOf, serialize, short, table } from '../format.js';
import type { DiskView, FileEntryView, NodeView, QuestionView, RunView } from '../views.js';

interface Lister {
  fetch(api: ApiClient, o: GetOptions): Promise<unknown>;
  headers: string[];
  rows(data: never, targetName: (id: string) => string | null): string[][];
  /** The table names run targets (two more lists asked for). */
  names?: true;
}

interface GetOptions {
  output?: string;
  limit?: string;
}

const daemons = (n: NodeView): string => (n.daemonsReady ?? []).map((d) => (d.ready ? d.type : `${d.type}(${d.phase})`)).join(',') || '-';

const nodeRows = (nodes: NodeView[]): string[][] =>
  nodes
    .slice()
    .sort((a, b) => a.hostname.localeCompare(b.hostname))
    .map((n) => [
      n.hostname,
      n.name && n.name !== n.hostname ? n.name : '-',
      n.status,
      dash(n.ip),
      daemons(n),
      String(n.diskCount),
      String(n.osdCount),
      n.ready?.ready ? 'yes' : `no: ${n.blocked?.reason ?? n.ready?.reason ?? '?'}`,
    ]);

const diskRows = (disks: DiskView[]): string[][] =>
  disks
    .slice()
    .sort((a, b) => a.nodeHostname.localeCompare(b.nodeHostname) || a.devicePath.localeCompare(b.devicePath))
    .map((d) => [
      d.nodeHostname,
      d.devicePath,
      d.serial,
      bytes(d.capacityBytes),
      dash(d.deviceClass),
      d.osdId === null ? (d.isMon ? 'mon store' : '-') : `osd.${d.osdId} ${dash(d.osdState)}`,
      d.eligible ? 'eligible' : d.reasons.join(','),
      dash(d.reason),
    ]);

const runRows = (runs: RunView[], targetName: (id: string) => string | null): string[][] =>
  runs.map((r) => [
    short(r.id),
    r.taskName,
    r.state,
    dash(r.nodeHostname),
    targetName(r.targetId) ?? (/^[0-9a-f]{8}-/.test(r.targetId) ? short(r.targetId) : r.targetId),
    age(r.createdAt),
    r.error ? r.error.split('\n')[0]!.slice(0, 80) : '',
  ]);

interface NetworkView {
  id: string;
  cidr: string;
  gateway: string;
  rangeStart: string;
  rangeEnd: string;
  status?: { phase?: string; nicName?: string };
}

interface ImageView {
  id: string;
  name: string;
  distro: string;
  version: string;
  arch: string;
  default?: boolean;
}

const KINDS: Record<string, Lister> = {
  nodes: {
    fetch: (api) => api.get('/nodes/details'),
    headers: ['hostname', 'name', 'status', 'ip', 'daemons', 'disks', 'osds', 'ready'],
    rows: nodeRows,
  },
  disks: {
    fetch: (api) => api.get('/disks'),
    headers: ['node', 'device', 'serial', 'size', 'class', 'OSD', 'eligibility', 'reason'],
    rows: diskRows,
  },
  runs: {
    fetch: (api, o) => api.get(`/task/runs/recent?limit=${encodeURIComponent(o.limit ?? '20')}`),
    headers: ['id', 'task', 'state', 'node', 'target', 'age', 'error'],
    rows: runRows,
    names: true,
  },
  networks: {
    fetch: (api) => api.get('/networks'),
    headers: ['cidr', 'gateway', 'range', 'interface', 'phase'],
    rows: (ns: NetworkView[]) =>
      ns.map((n) => [n.cidr, n.gateway, `${n.rangeStart}-${n.rangeEnd}`, dash(n.status?.nicName), dash(n.status?.phase)]),
  },
  images: {
    fetch: async (api) => {
      const [available, downloaded] = await Promise.all([
        api.get<ImageView[]>('/images/available'),
        api.get<ImageView[]>('/images/downloaded'),
      ]);
      const here = new Map(downloaded.map((i) => [i.id, i]));
      return available.map((i) => ({ ...i, downloaded: here.has(i.id), default: here.get(i.id)?.default ?? false }));
    },
    headers: ['id', 'name', 'distro', 'version', 'arch', 'downloaded', 'default'],
    rows: (is: Array<ImageView & { downloaded: boolean }>) =>
      is.map((i) => [short(i.id), i.name, i.distro, i.version, i.arch, i.downloaded ? 'yes' : 'no', i.default ? 'yes' : '']),
  },
  files: {
    fetch: async (api) => (await api.get<{ files: FileEntryView[] }>('/specs/files')).files,
    headers: ['file', 'state', 'documents', 'size', 'applied', 'error'],
    rows: (fs: FileEntryView[]) =>
      fs.map((f) => {
        const e = f.lastError?.errors[0];
        const error = f.lastError ? (e ? `${e.line}:${e.column} ${e.message}` : f.lastError.message) : '';
        return [f.file, dash(f.state), dash(f.documents), f.size === null ? '-' : `${f.size}B`, age(f.appliedAt), error.slice(0, 100)];
      }),
  },
  questions: {
    fetch: (api) => api.get('/task/questions/pending'),
    headers: ['id', 'task', 'run', 'age', 'options', 'question'],
    rows: (qs: QuestionView[]) => qs.map((q) => [short(q.id), q.taskName, short(q.runId), age(q.createdAt), q.options.join('/'), q.prompt]),
  },
};

export const GET_KINDS = Object.keys(KINDS);

export function registerGet(program: Command, io: Io): void {
  program
    .command('get')
    .description('list objects of a kind as a table')
    .addArgument(new Argument('<kind>', 'what to list').choices(GET_KINDS))
    .addOption(new Option('-o, --output <format>', 'output format').choices([...OUTPUTS]).default('table'))
    .option('--limit <n>', 'runs: how many of the most recent (1-1000)', '20')
    .action(async (kind: string, o: GetOptions, cmd: Command) => {
      const lister = KINDS[kind]!;
      const output = outputOf(o.output);
      const api = await clientFor(cmd, io);
      const data = await lister.fetch(api, o);
      if (output !== 'table') {
        io.out(serialize(data, output));
        return;
      }
      const names = lister.names ? await new Lookup(api).targetNames() : () => null;
      const rows = lister.rows(data as never, names);
      io.out(rows.length ? table(lister.headers, rows) : `no ${kind}`);
    });
}
