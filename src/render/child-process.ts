// How the render process is started: the same node binary, an empty environment (no
// ADMIN_PASSWORD, no tokens, no proxy settings), Node's permission model allowing reads of
// only the files it loads, nothing else (no writes, child processes, workers or addons), a
// small heap, no code generation from strings even in its own realm, and, through util-linux
// `unshare --net`, a network namespace of its own with no interface up: no network at all.
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CHILD = new URL('./render-child.js', import.meta.url);
const REALM = new URL('./template-realm.js', import.meta.url);

export interface ChildOptions {
  memoryMb: number;
  helpers: URL[];
  /** Run it under `unshare` with this command line (e.g. ['--net']), or not (null). */
  unshare: string[] | null;
}

/** Where `unshare` is, from PATH and the usual places; null when there is none. */
export function findUnshare(path = process.env.PATH ?? ''): string | null {
  for (const dir of [...path.split(delimiter), '/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
    if (!dir) continue;
    const file = join(dir, 'unshare');
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** Root makes a network namespace directly; anyone else needs a user namespace for it. */
export function unshareArgs(uid = process.getuid?.() ?? -1): string[] {
  return uid === 0 ? ['--net'] : ['--user', '--map-root-user', '--net'];
}

const readable = (url: URL): string => realpathSync(fileURLToPath(url));

/** The node command line; `entry` is render-child.js but for tests that probe the walls. */
export function nodeArgs(opts: Pick<ChildOptions, 'memoryMb' | 'helpers'>, entry: URL = CHILD): string[] {
  const permission = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';
  const helpers = opts.helpers.map(readable);
  return [
    permission,
    // One flag a file (Node 20.19+ no longer splits a list at commas); the imports of
    // render-child.js are checked too, so this is exactly what it loads.
    ...[readable(entry), readable(REALM), ...helpers].map((file) => `--allow-fs-read=${file}`),
    `--max-old-space-size=${opts.memoryMb}`,
    '--max-semi-space-size=1',
    '--disallow-code-generation-from-strings',
    // vm.SourceTextModule for helper modules and the import() callback of template scripts.
    '--experimental-vm-modules',
    '--no-warnings',
    readable(entry),
    ...helpers,
  ];
}

export function spawnRenderChild(opts: ChildOptions, unsharePath: string | null, entry: URL = CHILD): ChildProcess {
  const node = nodeArgs(opts, entry);
  const [cmd, args] =
    opts.unshare && unsharePath ? [unsharePath, [...opts.unshare, '--', process.execPath, ...node]] : [process.execPath, node];
  // Empty: node would add NODE_V8_COVERAGE (a coverage tool's directory) to an env without it.
  return spawn(cmd, args, { env: { NODE_V8_COVERAGE: undefined }, stdio: ['pipe', 'pipe', 'pipe'], cwd: '/' });
}
