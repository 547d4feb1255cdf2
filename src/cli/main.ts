#!/usr/bin/env node
// quarry: the command-line client of a Quarry server (README "The quarry CLI").
import { run } from './run.js';
import type { Io } from './context.js';

const io: Io = {
  out: (s) => process.stdout.write(`${s}\n`),
  err: (s) => process.stderr.write(`${s}\n`),
  env: process.env,
  stdin: process.stdin,
};

const code = await run(process.argv.slice(2), io);
// Let stdout drain before leaving (a pipe to head or a test reading it).
process.exitCode = code;
if (!process.stdout.writableNeedDrain) process.exit(code);
else process.stdout.once('drain', () => process.exit(code));
