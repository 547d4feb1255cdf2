// A registry of OS images: a JSON catalog at a URL. It is read on demand, validated with its
// schema, and its relative file URLs are resolved against the catalog's own URL. A registry
// that does not answer, or answers something that is not a valid catalog, is a 503 with a
// reason an operator can act on, never a crash.
import { ServiceUnavailableError } from '../errors.js';
import { catalogSchema, type CatalogEntry, type ImageRegistry } from '../model/image-kinds.js';
import { createAjv, toFieldErrors } from '../model/validate.js';
import { fetchFailure, fetchUrl } from './fetch-url.js';

const MAX_CATALOG_BYTES = 16 * 1024 * 1024;
const validate = createAjv().compile(catalogSchema);

const unreachable = (why: string): ServiceUnavailableError => new ServiceUnavailableError(`the image registry did not answer: ${why}`, 'REGISTRY_UNREACHABLE');
const invalid = (why: string): ServiceUnavailableError => new ServiceUnavailableError(`the image registry's catalog is not valid: ${why}`, 'REGISTRY_INVALID');

export interface HttpImageRegistryOptions {
  url: string;
  /** Deadline of one catalog read. */
  timeoutMs?: number;
}

export class HttpImageRegistry implements ImageRegistry {
  private readonly url: string;
  private readonly timeoutMs: number;

  constructor(opts: HttpImageRegistryOptions) {
    this.url = new URL(opts.url).href;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
  }

  async entries(signal?: AbortSignal): Promise<CatalogEntry[]> {
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const text = await this.read(signal ? AbortSignal.any([signal, deadline]) : deadline);
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      throw invalid('it is not JSON');
    }
    return parseCatalog(raw, this.url);
  }

  private async read(signal: AbortSignal): Promise<string> {
    let res: Response;
    try {
      res = await fetchUrl(this.url, { signal, headers: { accept: 'application/json' }, redirect: 'follow' });
    } catch (err) {
      // The URL is left out: it may carry credentials.
      throw unreachable(signal.aborted ? `no answer within ${this.timeoutMs} ms` : fetchFailure(err));
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw unreachable(`HTTP ${res.status}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body ?? []) {
        size += chunk.length;
        if (size > MAX_CATALOG_BYTES) throw invalid(`it is larger than ${MAX_CATALOG_BYTES} bytes`);
        chunks.push(Buffer.from(chunk));
      }
    } catch (err) {
      if (err instanceof ServiceUnavailableError) throw err;
      throw unreachable(`the answer broke off: ${fetchFailure(err)}`);
    }
    return Buffer.concat(chunks).toString('utf8');
  }
}

/** Validates a catalog and resolves its file URLs against `base`. Throws ServiceUnavailableError. */
export function parseCatalog(raw: unknown, base: string): CatalogEntry[] {
  if (!validate(raw)) {
    const errors = toFieldErrors(validate.errors).slice(0, 5);
    throw invalid(errors.map((e) => `${e.path} ${e.message}`).join('; '));
  }
  const entries = raw as CatalogEntry[];
  const seen = new Set<string>();
  return entries.map((e, i) => {
    const id = e.id.toLowerCase();
    if (seen.has(id)) throw invalid(`/${i}/id ${id} is listed twice`);
    seen.add(id);
    const names = new Set(e.files.map((f) => f.name));
    if (names.size !== e.files.length) throw invalid(`/${i}/files name the same file twice`);
    const files = e.files.map((f, j) => ({ name: f.name, url: resolveUrl(f.url, base, `/${i}/files/${j}/url`), size: f.size, sha256: f.sha256.toLowerCase() }));
    return { id, name: e.name, distro: e.distro, version: e.version, arch: e.arch, files };
  });
}

function resolveUrl(url: string, base: string, where: string): string {
  let u: URL;
  try {
    u = new URL(url, base);
  } catch {
    throw invalid(`${where} is not a URL`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw invalid(`${where} must be http or https`);
  return u.href;
}
