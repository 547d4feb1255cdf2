// The CLI as a function of its arguments: tests call it in-process against fakes; main.ts gives
// it the process's streams. Every failure ends in one of the exit codes of errors.ts.
import { CommanderError } from 'commander';
import { buildProgram } from './program.js';
import { CliError, ExitCode, ServerError } from './errors.js';
import type { Io } from './context.js';

export async function run(argv: string[], io: Io): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? ExitCode.ok : ExitCode.usage;
    }
    if (err instanceof ServerError) {
      for (const line of err.lines()) io.err(line);
      return err.exitCode;
    }
    if (err instanceof CliError) {
      io.err(`error: ${err.message}`);
      return err.exitCode;
    }
    io.err(`error: ${err instanceof Error ? err.message : String(err)}`);
    return ExitCode.failed;
  }
}
