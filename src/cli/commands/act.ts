// answer and invoke: the two imperative commands. A question is answered by its id (or its run's)
// prefix; an operation runs on nodes or disks named as elsewhere, each target scheduled or
// rejected with its reason (exit 1 when any is rejected).
import { Argument, type Command } from 'commander';
import { DISK_OPERATIONS, NODE_OPERATIONS } from '../../catalogue/operations.js';
import { lookupFor, type Io } from '../context.js';
import { CliError, UsageError } from '../errors.js';

interface Result {
  id: string;
  status: string;
  reason?: string;
}

const OPERATIONS = [...NODE_OPERATIONS, ...DISK_OPERATIONS] as string[];

function params(pairs: string[]): Record<string, string> {
  return Object.fromEntries(
    pairs.map((p) => {
      const eq = p.indexOf('=');
      if (eq < 1) throw new UsageError(`--param takes key=value, got ${p}`);
      return [p.slice(0, eq), p.slice(eq + 1)];
    }),
  );
}

export function registerAct(program: Command, io: Io): void {
  program
    .command('answer')
    .description('answer a question a task run waits on (quarry get questions lists them)')
    .argument('<question>', "the question's id or first characters (or its run's)")
    .argument('<answer>', 'one of its options, usually yes or no')
    .action(async (name: string, answer: string, _o: unknown, cmd: Command) => {
      const { api, find } = await lookupFor(cmd, io);
      const q = await find.question(name);
      if (!q.options.includes(answer)) throw new UsageError(`${answer} is not an option of that question: ${q.options.join(', ')}`);
      await api.send('POST', `/task/question/${q.id}/answer`, { json: { answer } });
      io.out(`answered ${answer}: ${q.taskName} (run ${q.runId.slice(0, 8)}): ${q.prompt}`);
    });
  program
    .command('invoke')
    .description('run an operation on nodes or disks, named as everywhere (hostname, YAML name, serial, node:/dev/path, id)')
    .addArgument(new Argument('<operation>', 'the operation').choices(OPERATIONS))
    .argument('<names...>', 'the nodes (node operations) or disks (disk operations)')
    .option('--disk <name>', 'ceph.create-mon: the disk for the monitor store')
    .option(
      '--param <key=value>',
      'a parameter of the operation (repeatable), e.g. export=cephfs',
      (v: string, acc: string[] | undefined) => [...(acc ?? []), v],
    )
    .action(async (operation: string, names: string[], o: { disk?: string; param?: string[] }, cmd: Command) => {
      const { api, find } = await lookupFor(cmd, io);
      const onDisks = (DISK_OPERATIONS as readonly string[]).includes(operation);
      const targets = onDisks
        ? await Promise.all(names.map(async (n) => ({ name: n, id: (await find.disk(n)).id })))
        : await Promise.all(names.map(async (n) => ({ name: n, id: (await find.node(n)).id })));
      const extra = {
        ...(o.disk ? { diskId: (await find.disk(o.disk)).id } : {}),
        ...(o.param ? { params: params(o.param) } : {}),
      };
      const body = onDisks ? { operation, diskIds: targets.map((t) => t.id) } : { operation, nodeIds: targets.map((t) => t.id), ...extra };
      const r = await api.send<{ results: Result[] }>('POST', onDisks ? '/invoke/disk' : '/invoke/node', { json: body });
      const nameOf = new Map(targets.map((t) => [t.id, t.name]));
      for (const x of r.body.results) io.out(`${nameOf.get(x.id) ?? x.id}: ${x.status}${x.reason ? `: ${x.reason}` : ''}`);
      const rejected = r.body.results.filter((x) => x.status !== 'scheduled').length;
      if (rejected) throw new CliError(`${operation}: ${rejected} of ${r.body.results.length} target(s) rejected`);
    });
}
