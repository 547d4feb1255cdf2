// The specs folder's files through the API (GET/PUT/DELETE /specs/files): a client writes a
// file into SPECS_DIR, so the folder stays the one source of what files declare. A write is
// judged first exactly as the folder would judge it (the same evaluation a dry run makes) and
// refused whole when bad, so a bad file never lands in the folder; a good one is written to a
// hidden temporary file (the watcher ignores hidden files) and renamed over the name, so the
// watcher never reads it half-written. The answer then waits, a while, for the folder to apply it.
import { randomBytes } from 'node:crypto';
import { open, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError, NotFoundError, type FieldError } from '../errors.js';
import type { PlanView } from './evaluate.js';
import type { FileStatus, SpecsFolder } from './folder.js';
import type { SpecError } from './parse.js';

/** A top-level .yaml/.yml file of SPECS_DIR, not hidden: no path separator can pass. */
export const SPEC_FILE_NAME = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}\\.ya?ml$';
const NAME = new RegExp(SPEC_FILE_NAME);

/** How long a write waits for the folder to apply it before answering "still under way". */
export const APPLY_WAIT_MS = 10_000;

export interface SpecFileEntry {
  file: string;
  /** Bytes on disk; null when the folder knows the file and it is gone from disk (deleted). */
  size: number | null;
  modifiedAt: string | null;
  /** The folder's state of the file; null when it has not read it yet. */
  state: FileStatus['state'] | null;
  documents: number | null;
  appliedAt: string | null;
  lastError: FileStatus['lastError'];
}

export interface SpecFileWrite {
  file: string;
  /** The folder's status once it applied the text; null when it had not within the wait. */
  applied: FileStatus | null;
  /** What the text changes, judged before it was written (POST /specs/plan's answer). */
  plan: PlanView;
}

/** A specs error as a problem's field error: where in the body, with its line and column. */
const fieldError = (e: SpecError): FieldError & Omit<SpecError, 'field' | 'file'> => ({
  path: `/body${e.field}`,
  message: `line ${e.line}, column ${e.column}: ${e.message}`,
  document: e.document,
  line: e.line,
  column: e.column,
});

export class SpecFiles {
  constructor(
    private readonly dir: string,
    private readonly folder: SpecsFolder,
    private readonly waitMs = APPLY_WAIT_MS,
  ) {}

  /** Refuses what is not a plain top-level spec file name (checked before any file is touched). */
  static checkName(name: string): void {
    if (!NAME.test(name) || name.includes('..')) {
      throw new InputError('invalid file name', [
        { path: '/params/name', message: 'must be a .yaml or .yml file name at the top of the specs folder: no /, no .., not hidden' },
      ]);
    }
  }

  /** Every file the folder knows, and every top-level spec file on disk it has not read yet. */
  async list(): Promise<SpecFileEntry[]> {
    const known = new Map(this.folder.status().map((s) => [s.file, s]));
    const onDisk = (await readdir(this.dir).catch(() => [] as string[])).filter((f) => NAME.test(f));
    const names = [...new Set([...known.keys(), ...onDisk])].sort();
    return Promise.all(
      names.map(async (file) => {
        const s = known.get(file);
        const st = await stat(join(this.dir, file)).catch(() => null);
        return {
          file,
          size: st?.isFile() ? st.size : null,
          modifiedAt: st?.isFile() ? st.mtime.toISOString() : null,
          state: s?.state ?? null,
          documents: s?.documents ?? null,
          appliedAt: s?.appliedAt ?? null,
          lastError: s?.lastError ?? null,
        };
      }),
    );
  }

  async read(name: string): Promise<string> {
    SpecFiles.checkName(name);
    try {
      return await readFile(join(this.dir, name), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new NotFoundError(`no specs file ${name}`);
      throw err;
    }
  }

  /** Judges the text as the folder would; bad: 400 with every error's line and column, nothing
   * written. Good: written atomically, then the folder's own apply awaited (up to waitMs). */
  async write(name: string, text: string): Promise<SpecFileWrite> {
    SpecFiles.checkName(name);
    const plan = await this.folder.plan(name, text);
    if (!plan.valid) {
      const n = plan.errors.length;
      throw new InputError(`${name}: ${n} error(s); nothing was written`, plan.errors.map(fieldError), 'SPEC_INVALID');
    }
    const applied = this.folder.whenApplied(name, text, this.waitMs);
    await this.writeAtomically(name, text);
    return { file: name, applied: await applied, plan };
  }

  /** Removes the file, as `rm` in the folder would: what it owned is pruned, except objects
   * holding data, which are kept and marked orphaned. */
  async remove(name: string): Promise<{ file: string; applied: FileStatus | null }> {
    SpecFiles.checkName(name);
    const path = join(this.dir, name);
    const st = await stat(path).catch(() => null);
    if (!st?.isFile()) throw new NotFoundError(`no specs file ${name}`);
    const applied = this.folder.whenApplied(name, null, this.waitMs);
    await rm(path);
    return { file: name, applied: await applied };
  }

  private async writeAtomically(name: string, text: string): Promise<void> {
    const tmp = join(this.dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
    const fh = await open(tmp, 'wx', 0o640);
    try {
      await fh.writeFile(text, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      await rename(tmp, join(this.dir, name));
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }
}
