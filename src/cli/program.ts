// The command tree: every command group registers itself here. Kept apart from main.ts so tests
// and the completion generator read the same tree the binary runs.
import { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { registerAct } from './commands/act.js';
import { registerCompletion } from './commands/completion.js';
import { registerDescribe } from './commands/describe.js';
import { registerGet } from './commands/get.js';
import { registerLogin } from './commands/login.js';
import { registerSpecs } from './commands/specs.js';
import { registerStream } from './commands/stream.js';
import { registerWait } from './commands/wait.js';
import type { Io } from './context.js';

export const EXIT_CODES_HELP = `
Exit codes:
  0  ok
  1  the server refused the request, or an operation failed (its problem detail is printed)
  2  usage error (unknown command or option, missing argument)
  3  not converged before the timeout (wait)
  4  the server cannot be reached, or nobody is logged in (or the token was refused)

Environment: QUARRY_SERVER and QUARRY_TOKEN override the config file
($XDG_CONFIG_HOME/quarry/config.json, default ~/.config/quarry/config.json).`;

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

export function buildProgram(io: Io): Command {
  const program = new Command('quarry');
  program
    .description('Operate a Quarry datacenter from the command line: specs, nodes, disks, runs, events')
    .version(version(), '-V, --version')
    .option('--server <url>', 'the Quarry server (default: QUARRY_SERVER, then the one logged in to)')
    .configureOutput({ writeOut: (s) => io.out(s.replace(/\n$/, '')), writeErr: (s) => io.err(s.replace(/\n$/, '')) })
    .exitOverride()
    .showHelpAfterError()
    .showSuggestionAfterError()
    .configureHelp({ showGlobalOptions: true })
    .addHelpText('after', EXIT_CODES_HELP);
  registerLogin(program, io);
  registerGet(program, io);
  registerDescribe(program, io);
  registerSpecs(program, io);
  registerWait(program, io);
  registerStream(program, io);
  registerAct(program, io);
  registerCompletion(program, io);
  return program;
}
