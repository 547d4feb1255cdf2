// plan -f and apply -f: a specs file judged by the server (POST /specs/plan, a dry run shown as a
// diff) or written into its specs folder (PUT /specs/files/{name}), which applies it.
import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { clientFor, type Io } from '../context.js';
import { CliError, UsageError } from '../errors.js';
import { readStdin } from '../prompt.js';
import type { ChangeView, FileStatusView, PlanView, SpecErrorView } from '../views.js';

const YAML = 'application/yaml';
const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}\.ya?ml$/;

interface FileOptions {
  filename: string;
  name?: string;
}

async function source(io: Io, o: FileOptions): Promise<{ name: string; text: string }> {
  const name = o.name ?? (o.filename === '-' ? undefined : basename(o.filename));
  if (!name) throw new UsageError('reading from stdin (-f -) needs --name <file.yaml>');
  if (!NAME.test(name) || name.includes('..'))
    throw new UsageError(`${name}: a specs file name is letters, digits, _ . - and ends in .yaml or .yml (use --name)`);
  try {
    return { name, text: o.filename === '-' ? await readStdin(io.stdin) : await readFile(o.filename, 'utf8') };
  } catch (err) {
    throw new UsageError(`cannot read ${o.filename}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

const fields = (c: ChangeView): string => (c.fields?.length ? `: ${c.fields.join(', ')}` : '');
const label = (c: { kind: string; name: string }): string => `${c.kind} ${c.name}`;

export const errorLine = (file: string, e: SpecErrorView): string =>
  `${file}:${e.line}:${e.column}: ${e.message}${e.field ? ` (${e.field})` : ''}`;

/** The plan as a diff: + created, ~ updated, - pruned, ! orphaned; tasks with the destructive ones marked. */
export function planLines(p: PlanView): string[] {
  if (!p.valid) return p.errors.map((e) => errorLine(p.file, e));
  const lines = [
    ...p.created.map((c) => `+ ${label(c)}`),
    ...p.updated.map((c) => `~ ${label(c)}${fields(c)}`),
    ...p.pruned.map((c) => `- ${label(c)}${c.reason ? ` (${c.reason})` : ''}`),
    ...p.orphaned.map((c) => `! ${label(c)} orphaned: no longer declared, kept because it holds data${c.reason ? ` (${c.reason})` : ''}`),
  ];
  if (!lines.length) lines.push('no changes');
  if (p.pending.length)
    lines.push('', 'pending (applies, waits for the world):', ...p.pending.map((x) => `  ? ${label(x)}: ${x.reason}: ${x.message}`));
  if (p.tasks.length) {
    lines.push('', 'task runs it would start:');
    for (const t of p.tasks) {
      const mark = t.destructive ? 'DESTRUCTIVE ' : '';
      const extra = [t.wipes ? `wipes ${t.wipes}` : '', t.moves ? `moves ${t.moves}` : ''].filter(Boolean).join('; ');
      lines.push(`  ${t.destructive ? '!' : ' '} ${mark}${t.task}  ${t.kind} ${t.name}${extra ? `  (${extra})` : ''}`);
      if (t.question) lines.push(`      asks first: ${t.question}`);
    }
  }
  if (p.disruptions.length) {
    lines.push('', 'disruptions (one wave at a time):');
    for (const d of p.disruptions)
      lines.push(`  wave ${d.wave}: ${d.kind} ${d.nodes.join(', ')}${d.lease ? '' : ' (no Ceph daemon: no lease)'}`);
    if (p.disruptionNote) lines.push(`  ${p.disruptionNote}`);
  }
  const n = (xs: unknown[], what: string) => (xs.length ? [`${xs.length} ${what}`] : []);
  const summary = [
    ...n(p.created, 'to create'),
    ...n(p.updated, 'to update'),
    ...n(p.pruned, 'to prune'),
    ...n(p.orphaned, 'to orphan'),
    ...n(
      p.tasks.filter((t) => t.destructive),
      'destructive step(s)',
    ),
  ];
  if (summary.length) lines.push('', `${p.file}: ${summary.join(', ')}`);
  return lines;
}

function statusLines(s: FileStatusView): string[] {
  const lines = [`${s.file}: ${s.state} (${s.documents} document(s), ${s.objects.length} object(s) owned)`];
  if (s.pending.length) lines.push(...s.pending.map((x) => `  ? ${label(x)}: ${x.reason}: ${x.message}`));
  if (s.lastError) lines.push(`  ${s.lastError.message}`, ...s.lastError.errors.map((e) => `  ${errorLine(s.file, e)}`));
  return lines;
}

export function registerSpecs(program: Command, io: Io): void {
  program
    .command('plan')
    .description('dry run: what applying a specs file would create, update, prune and run, as a diff (changes nothing)')
    .requiredOption('-f, --filename <file>', 'the YAML file (- for stdin)')
    .option('--name <file.yaml>', "the name it would have in the specs folder (default: the file's own)")
    .addHelpText(
      'after',
      '\nMarks: + create, ~ update, - prune, ! orphan or destructive step, ? pending. Exit 1 when the file would be refused.',
    )
    .action(async (o: FileOptions, cmd: Command) => {
      const { name, text } = await source(io, o);
      const api = await clientFor(cmd, io);
      const plan = (await api.send<PlanView>('POST', `/specs/plan?file=${encodeURIComponent(name)}`, { text, contentType: YAML })).body;
      io.out(planLines(plan).join('\n'));
      if (!plan.valid) throw new CliError(`${name} would be refused: ${plan.errors.length} error(s)`);
    });
  program
    .command('apply')
    .description("write a specs file into the server's specs folder, which applies it (refused whole, with line and column, when bad)")
    .requiredOption('-f, --filename <file>', 'the YAML file (- for stdin)')
    .option('--name <file.yaml>', "its name in the specs folder (default: the file's own)")
    .action(async (o: FileOptions, cmd: Command) => {
      const { name, text } = await source(io, o);
      const api = await clientFor(cmd, io);
      const r = await api.send<{ applied?: FileStatusView; plan?: PlanView; status?: string }>(
        'PUT',
        `/specs/files/${encodeURIComponent(name)}`,
        {
          text,
          contentType: YAML,
        },
      );
      if (r.status === 202 || !r.body.applied) {
        io.out(`${name}: written; the folder is still applying it (follow with: quarry get files, quarry wait --for converged)`);
        return;
      }
      if (r.body.plan) io.out(planLines(r.body.plan).join('\n'));
      io.out(statusLines(r.body.applied).join('\n'));
      if (r.body.applied.state === 'failed') throw new CliError(`${name}: written, but the folder refused it`);
    });
}
