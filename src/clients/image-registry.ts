// A registry of OS images: a JSON catalog at a URL. It is read on demand, validated with its
// schema, and its relative file URLs are resolved against the catalog's own URL. A registry
// that does not answer, or answers something that is not a valid catalog, is a 503 with a
// reason an operator can act on, never a crash.
//
// Trust: the catalog is the root of the images' integrity (every file is SHA-256 verified
// against it), and its names reach cloud-init and the API. So every entry is checked by the
// schema (ids, one-line names, plain file names, http(s) URLs, hex digests, bounded sizes), and
// one bad entry refuses the whole catalog: a registry that serves a hostile or broken entry is
// not one to take the other entries from either, and an operator sees the 503 with the entry's
// place and reason rather than an image silently missing. Plain http is accepted only from
// loopback, or when the catalog is pinned (IMAGE_REGISTRY_SHA256, which makes the whole chain
// verifiable over any transport), or when IMAGE_REGISTRY_INSECURE_HTTP says so.
import { createHash } from 'node:crypto';
import { InputError, ServiceUnavailableError } from '../errors.js';
import { catalogSchema, type CatalogEntry, type ImageRegistry } from '../model/image-kinds.js';
import { createAjv, toFieldErrors } from '../model/validate.js';
import { fetchFailure, fetchUrl } from './fetch-url.js';

const MAX_CATALOG_BYTES = 16 * 1024 * 1024;
const MAX_REDIRECTS = 5;
const validate = createAjv().compile(catalogSchema);

const unreachable = (why: string): ServiceUnavailableError =>
  new ServiceUnavailableError(`the image registry did not answer: ${why}`, 'REGISTRY_UNREACHABLE');
const invalid = (why: string): ServiceUnavailableError =>
  new ServiceUnavailableError(`the image registry's catalog is not valid: ${why}`, 'REGISTRY_INVALID');

export interface HttpImageRegistryOptions {
  url: string;
  /** Deadline of one catalog read. */
  timeoutMs?: number;
  /** Accept a plain-http catalog from another host (IMAGE_REGISTRY_INSECURE_HTTP). */
  insecureHttp?: boolean;
  /** The SHA-256 the catalog's bytes must have (IMAGE_REGISTRY_SHA256), lower-case hex. */
  sha256?: string | null;
}

const isLoopback = (hostname: string): boolean =>
  hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);

/** Refuses (InputError, at start-up) a registry URL Quarry should not read a catalog from:
 * anything but http(s), and plain http to another host unless the catalog is pinned (and the
 * URL then carries no password to send in the clear) or insecure http is explicitly accepted. */
export function checkRegistryUrl(url: string, opts: { insecureHttp?: boolean; sha256?: string | null } = {}): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new InputError('IMAGE_REGISTRY is not a URL', [{ path: '/env/IMAGE_REGISTRY', message: 'must be an http(s) URL' }]);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') {
    throw new InputError('IMAGE_REGISTRY must be an https URL', [{ path: '/env/IMAGE_REGISTRY', message: 'must be https' }]);
  }
  if (u.protocol === 'http:' && !isLoopback(u.hostname) && !opts.insecureHttp) {
    const credentials = u.username !== '' || u.password !== '';
    if (!opts.sha256 || credentials) {
      throw new InputError(
        `IMAGE_REGISTRY ${u.origin} is plain http: anyone on the path could change the catalog (and with it which files are trusted)${credentials ? ' and read its password' : ''}. Use https, pin the catalog with IMAGE_REGISTRY_SHA256${credentials ? ' and drop the password' : ''}, or accept the risk with IMAGE_REGISTRY_INSECURE_HTTP=true`,
        [{ path: '/env/IMAGE_REGISTRY', message: 'plain http to another host' }],
      );
    }
  }
  return u;
}

export class HttpImageRegistry implements ImageRegistry {
  private readonly url: string;
  private readonly timeoutMs: number;

  private readonly sha256: string | null;
  private readonly insecureHttp: boolean;

  constructor(opts: HttpImageRegistryOptions) {
    this.url = checkRegistryUrl(opts.url, opts).href;
    this.insecureHttp = opts.insecureHttp ?? false;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.sha256 = opts.sha256?.toLowerCase() ?? null;
  }

  async entries(signal?: AbortSignal): Promise<CatalogEntry[]> {
    const deadline = AbortSignal.timeout(this.timeoutMs);
    const bytes = await this.read(signal ? AbortSignal.any([signal, deadline]) : deadline);
    if (this.sha256 !== null && createHash('sha256').update(bytes).digest('hex') !== this.sha256) {
      throw invalid('its SHA-256 is not the one IMAGE_REGISTRY_SHA256 pins');
    }
    const text = bytes.toString('utf8');
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      throw invalid('it is not JSON');
    }
    return parseCatalog(raw, this.url);
  }

  /** Redirects are followed here, each target checked before it is asked (an https registry
   * must not hand Quarry to plain http), at most MAX_REDIRECTS of them. */
  private async fetchFollowing(signal: AbortSignal): Promise<Response> {
    let url = this.url;
    for (let hop = 0; ; hop++) {
      let res: Response;
      try {
        res = await fetchUrl(url, { signal, headers: { accept: 'application/json' }, redirect: 'manual' });
      } catch (err) {
        // The URL is left out: it may carry credentials.
        throw unreachable(signal.aborted ? `no answer within ${this.timeoutMs} ms` : fetchFailure(err));
      }
      const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
      if (location === null) return res;
      await res.body?.cancel();
      if (hop >= MAX_REDIRECTS) throw unreachable(`more than ${MAX_REDIRECTS} redirects`);
      try {
        url = checkRegistryUrl(new URL(location, url).href, { insecureHttp: this.insecureHttp, sha256: this.sha256 }).href;
      } catch {
        throw unreachable('it redirected to an address Quarry does not read catalogs from (plain http, or not http)');
      }
    }
  }

  private async read(signal: AbortSignal): Promise<Buffer> {
    const res = await this.fetchFollowing(signal);
    if (!res.ok) {
      await res.body?.cancel();
      throw unreachable(`HTTP ${res.status}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      const body: AsyncIterable<Uint8Array> | Iterable<Uint8Array> = res.body ?? [];
      for await (const chunk of body) {
        size += chunk.length;
        if (size > MAX_CATALOG_BYTES) throw invalid(`it is larger than ${MAX_CATALOG_BYTES} bytes`);
        chunks.push(Buffer.from(chunk));
      }
    } catch (err) {
      if (err instanceof ServiceUnavailableError) throw err;
      throw unreachable(`the answer broke off: ${fetchFailure(err)}`);
    }
    return Buffer.concat(chunks);
  }
}

/** " (entry <id>)" for an error inside an entry whose id is a UUID, so the operator can find it. */
function entryName(raw: unknown, path: string): string {
  const i = /^\/(\d+)\//.exec(path)?.[1];
  const id = i !== undefined && Array.isArray(raw) ? (raw[Number(i)] as { id?: unknown } | null)?.id : undefined;
  return typeof id === 'string' && UUID.test(id) ? ` (entry ${id.toLowerCase()})` : '';
}

const UUID = /^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/i;

/** Validates a catalog and resolves its file URLs against `base`. Throws ServiceUnavailableError. */
export function parseCatalog(raw: unknown, base: string): CatalogEntry[] {
  if (!validate(raw)) {
    const errors = toFieldErrors(validate.errors).slice(0, 5);
    throw invalid(errors.map((e) => `${e.path}${entryName(raw, e.path)} ${e.message}`).join('; '));
  }
  const entries = raw as CatalogEntry[];
  const seen = new Set<string>();
  return entries.map((e, i) => {
    const id = e.id.toLowerCase();
    if (seen.has(id)) throw invalid(`/${i}/id ${id} is listed twice`);
    seen.add(id);
    const names = new Set(e.files.map((f) => f.name));
    if (names.size !== e.files.length) throw invalid(`/${i}/files name the same file twice`);
    const files = e.files.map((f, j) => ({
      name: f.name,
      url: resolveUrl(f.url, base, `/${i}/files/${j}/url`),
      size: f.size,
      sha256: f.sha256.toLowerCase(),
    }));
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
