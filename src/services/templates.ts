// The templates in the store: seeded from the shipped files (every templates/*.ejs is one,
// named by its file name), replaced by admins as new versions, rendered in the sandbox. This is
// the render function every user of a template goes through, so a PUT changes what is served.
import { readFile, readdir } from 'node:fs/promises';
import { ConflictError, InputError, NotFoundError } from '../errors.js';
import type { Clock } from '../model/clock.js';
import type { Doc } from '../model/document.js';
import {
  TemplateKind,
  isTemplateName,
  templateId,
  templateVersionId,
  type TemplateSpec,
  type TemplateVersionSpec,
} from '../model/template-kinds.js';
import { checkTemplate, templateHeader } from '../render/compile.js';
import type { RenderLane, TemplateRenderer } from '../render/sandbox.js';
import type { Store } from '../store/types.js';

export type TemplateDoc = Doc<TemplateSpec>;

/** What GET /templates lists. */
export interface TemplateSummary {
  name: string;
  description: string;
  path: string;
  postHook: string;
  version: number;
  updatedAt: string;
}

export function mustBeTemplateName(name: string): string {
  if (!isTemplateName(name)) {
    throw new InputError(`invalid template name "${name.replace(/[^\x20-\x7e]/g, '?')}"`, [
      { path: '/params/name', message: 'letters, digits, _ and -, in dot-separated parts; no path separators or ..' },
    ]);
  }
  return name;
}

/** What a machine renders on its way from network boot to a running agent (GET /boot/*, the
 * install's cloud-init and the agent's unit): these never wait behind other templates. */
export const BOOT_TEMPLATES: ReadonlySet<string> = new Set(['ipxe-boot', 'ipxe-default', 'cloud-init', 'quarry-agent.service']);

/** The configuration files the master renders for itself and its nodes, from stored state only:
 * the same version and context must give the same bytes. */
const CONFIG_TEMPLATES: ReadonlySet<string> = new Set(['ceph.conf', 'dnsmasq.conf']);

export class TemplateLibrary {
  /** The last rendering of each config template, by version and context (see render). */
  private readonly lastConfig = new Map<string, { key: string; text: string }>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly sandbox: TemplateRenderer,
  ) {}

  /** Brings every shipped file into the store: new ones as version 1, a changed shipped file
   * as a new version unless an admin has replaced that template's source. */
  async seed(dir: URL): Promise<void> {
    const files = (await readdir(dir)).filter((f) => f.endsWith('.ejs')).sort();
    for (const file of files) {
      const name = file.slice(0, -'.ejs'.length);
      if (!isTemplateName(name)) continue;
      const source = await readFile(new URL(file, dir), 'utf8');
      const current = await this.find(name);
      if (!current) await this.create(name, source, false).catch((err: unknown) => ignoreConflict(err));
      else if (!current.spec.edited && current.spec.source !== source) await this.replace(name, source, false);
    }
  }

  async list(): Promise<TemplateSummary[]> {
    const all = (await this.store.list<TemplateSpec>(TemplateKind.Template)) as TemplateDoc[];
    return all
      .map((d) => ({
        name: d.spec.name,
        description: d.spec.description,
        path: d.spec.path,
        postHook: d.spec.postHook,
        version: d.spec.version,
        updatedAt: d.metadata.updatedAt,
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  async get(name: string): Promise<TemplateDoc> {
    const doc = await this.find(mustBeTemplateName(name));
    if (!doc) throw new NotFoundError(`no template ${name}`);
    return doc;
  }

  /** The current source, or an earlier version's. */
  async source(name: string, version?: number): Promise<{ source: string; version: number; current: number }> {
    const doc = await this.get(name);
    if (version === undefined || version === doc.spec.version)
      return { source: doc.spec.source, version: doc.spec.version, current: doc.spec.version };
    const old = await this.store.get<TemplateVersionSpec>(TemplateKind.TemplateVersion, templateVersionId(name, version));
    if (!old) throw new NotFoundError(`template ${name} has no version ${version} (current: ${doc.spec.version})`);
    return { source: old.spec.source, version, current: doc.spec.version };
  }

  /** A new source, compiled first: one that does not compile changes nothing. A new name makes
   * a new template. Answers the new version. */
  async replace(name: string, source: string, edited = true): Promise<number> {
    mustBeTemplateName(name);
    checkTemplate(name, source);
    if (!(await this.find(name))) {
      try {
        return (await this.create(name, source, edited)).spec.version;
      } catch (err) {
        ignoreConflict(err); // created meanwhile: replace it below
      }
    }
    let version = 0;
    await this.store.mutateSpec<TemplateSpec>(TemplateKind.Template, templateId(name), (d) => {
      version = d.spec.version + 1;
      return { ...d.spec, source, version, edited: d.spec.edited || edited };
    });
    await this.keepVersion(name, version, source);
    return version;
  }

  async settings(name: string, change: { path?: string; postHook?: string }): Promise<void> {
    await this.get(name);
    await this.store.mutateSpec<TemplateSpec>(TemplateKind.Template, templateId(name), (d) => {
      const next = { ...d.spec, path: change.path ?? d.spec.path, postHook: change.postHook ?? d.spec.postHook };
      return next.path === d.spec.path && next.postHook === d.spec.postHook ? undefined : next;
    });
  }

  /** Renders the current source with the context, within the sandbox's deadline, in the lane
   * the caller names; by default the boot templates take the boot lane and all others the
   * operator lane (see BOOT_TEMPLATES). */
  async render(name: string, context: Record<string, unknown>, lane?: RenderLane): Promise<string> {
    const doc = await this.get(name);
    const render = () =>
      this.sandbox.render(name, doc.spec.version, doc.spec.source, context, lane ?? (BOOT_TEMPLATES.has(name) ? 'boot' : 'operator'));
    if (!CONFIG_TEMPLATES.has(name)) return render();
    // Every agent's heartbeat compares its ceph.conf hash with the master's: rendering it anew
    // each time costs a trip to the render process (~2 ms), which thousands of agents would
    // saturate. A config file must render the same bytes for the same context (its hash is
    // what nodes compare), so the last answer for this version and context is served again.
    const key = `${doc.spec.version}\0${JSON.stringify(context)}`;
    const last = this.lastConfig.get(name);
    if (last?.key === key) return last.text;
    const text = await render();
    this.lastConfig.set(name, { key, text });
    return text;
  }

  private async find(name: string): Promise<TemplateDoc | undefined> {
    return (await this.store.get<TemplateSpec>(TemplateKind.Template, templateId(name))) as TemplateDoc | undefined;
  }

  private async create(name: string, source: string, edited: boolean): Promise<TemplateDoc> {
    const header = templateHeader(source);
    const spec: TemplateSpec = {
      name,
      description: header.description,
      source,
      version: 1,
      path: header.path,
      postHook: header.postHook,
      edited,
    };
    const doc = await this.store.create<TemplateSpec>({ kind: TemplateKind.Template, id: templateId(name), name, spec });
    await this.keepVersion(name, 1, source);
    return doc;
  }

  // A version document may exist already when an earlier attempt stopped half-way.
  private async keepVersion(name: string, version: number, source: string): Promise<void> {
    const spec: TemplateVersionSpec = { name, version, source, createdAt: this.clock.iso() };
    await this.store
      .create<TemplateVersionSpec>({
        kind: TemplateKind.TemplateVersion,
        id: templateVersionId(name, version),
        name: `${name}@${version}`,
        spec,
      })
      .catch(ignoreConflict);
  }
}

function ignoreConflict(err: unknown): void {
  if (!(err instanceof ConflictError)) throw err;
}
