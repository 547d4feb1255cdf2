// No loop imports another loop's file: what two loops share lives in reconcilers/shared/ (or in
// src/runtime when it is not about Ceph). The manager, MDS and gateway folders hold only their
// DaemonKind, a part of the one daemon loop (reconcilers/daemon/).
import test from 'ava';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const reconcilers = join(root, 'reconcilers');
const daemonKinds = ['mgr', 'mds', 'rgw'];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const folderOf = (file: string): string | null => {
  const rel = relative(reconcilers, file).split('/');
  return rel.length > 1 && rel[0] !== '..' ? (rel[0] ?? null) : null;
};

test('loop imports: no loop imports a file of another loop', (t) => {
  const bad: string[] = [];
  for (const file of sources(reconcilers)) {
    const from = folderOf(file);
    for (const m of readFileSync(file, 'utf8').matchAll(/from\s*['"](\.[^'"]+)['"]/g)) {
      const to = folderOf(resolve(dirname(file), m[1] ?? ''));
      if (!to || to === from || to === 'shared') continue;
      if (to === 'daemon' && from !== null && daemonKinds.includes(from)) continue;
      bad.push(`${relative(root, file)} → ${m[1]}`);
    }
  }
  t.deepEqual(bad, []);
});

test('loop imports: every loop applies its plan through the loop kit', (t) => {
  const loops = readdirSync(reconcilers).filter((d) => statSync(join(reconcilers, d, 'loop.ts'), { throwIfNoEntry: false })?.isFile());
  t.true(loops.length >= 9, `found ${loops.join(', ')}`);
  const without = loops.filter((d) => !/\bapplyPlan(<[^(]*>)?\(/.test(readFileSync(join(reconcilers, d, 'loop.ts'), 'utf8')));
  t.deepEqual(without, []);
});
