// Password hashing with scrypt (memory-hard, in node:crypto, run on the libuv thread pool).
// Parameters travel with each hash, so raising them later still verifies old hashes.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { RateLimitedError } from '../../errors.js';

export interface ScryptParams {
  /** CPU/memory cost, a power of two. OWASP: 2^17 with r=8, p=1 (128 MiB per hash). */
  N: number;
  r: number;
  p: number;
}

export const OWASP_SCRYPT: ScryptParams = Object.freeze({ N: 2 ** 17, r: 8, p: 1 });

const KEY_LEN = 64;
const SALT_LEN = 16;
const MAX_N = 2 ** 20;

function derive(password: string, salt: Buffer, params: ScryptParams, keyLen: number): Promise<Buffer> {
  // scrypt needs 128·N·r bytes; node's default maxmem (32 MiB) refuses the OWASP setting.
  const opts: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, keyLen, opts, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

interface ParsedHash {
  params: ScryptParams;
  salt: Buffer;
  hash: Buffer;
}

function parse(encoded: string): ParsedHash | null {
  const [tag, n, r, p, salt, hash] = encoded.split('$');
  if (tag !== 'scrypt' || !salt || !hash) return null;
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  const sane = Number.isInteger(params.N) && params.N > 1 && params.N <= MAX_N && (params.N & (params.N - 1)) === 0;
  if (!sane || !(params.r >= 1 && params.r <= 32) || !(params.p >= 1 && params.p <= 16)) return null;
  return { params, salt: Buffer.from(salt, 'base64url'), hash: Buffer.from(hash, 'base64url') };
}

/** The queue key of work no client address asked for (creating users, changing a password). */
export const INTERNAL_SOURCE = '';

export interface HasherStats {
  running: number;
  waiting: number;
  /** Sources with work running or waiting. */
  sources: number;
}

interface SourceQueue {
  waiting: Array<() => void>;
  running: number;
  /** When this source last got a slot (a counter); 0: never while it has been queued. */
  servedAt: number;
}

/**
 * Hashing and verification behind a small gate: each hash holds 128 MiB for a few hundred ms,
 * so unauthenticated login traffic must not be able to run many at once. The gate is fair by
 * source address: a free slot goes to the waiting source served longest ago (a new one first),
 * and each source may have only a few waiting, so a flood from one address is refused at once
 * (429, no hashing) and cannot make a login from another address wait behind it.
 */
export class PasswordHasher {
  private running = 0;
  private waiting = 0;
  private tick = 0;
  private readonly sources = new Map<string, SourceQueue>();
  private dummy: Promise<string> | undefined;

  constructor(
    readonly params: ScryptParams = OWASP_SCRYPT,
    private readonly concurrency = 2,
    private readonly maxWaiting = 64,
    private readonly maxWaitingPerSource = 4,
  ) {}

  async hash(password: string, source = INTERNAL_SOURCE): Promise<string> {
    const salt = randomBytes(SALT_LEN);
    const key = await this.gated(() => this.derive(password, salt, this.params, KEY_LEN), source);
    const { N, r, p } = this.params;
    return `scrypt$${N}$${r}$${p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
  }

  /** Constant-time compare. A missing or broken hash still costs one full derivation, so the
   * answer time does not tell an unknown user from a wrong password. */
  async verify(password: string, encoded: string | undefined, source = INTERNAL_SOURCE): Promise<boolean> {
    const parsed = parse(encoded ?? '') ?? parse(await this.dummyHash());
    if (!parsed) return false;
    const key = await this.gated(() => this.derive(password, parsed.salt, parsed.params, parsed.hash.length), source);
    return encoded !== undefined && parse(encoded) !== null && timingSafeEqual(key, parsed.hash);
  }

  /** True when the stored hash was made with weaker parameters than the current ones. */
  outdated(encoded: string): boolean {
    const parsed = parse(encoded);
    return !parsed || parsed.params.N < this.params.N || parsed.params.r < this.params.r || parsed.params.p < this.params.p;
  }

  /** Makes the stand-in hash ahead of the first login, so that one is not slower either. */
  warm(): Promise<string> {
    return this.dummyHash();
  }

  stats(): HasherStats {
    return { running: this.running, waiting: this.waiting, sources: this.sources.size };
  }

  /** The scrypt call itself; a seam for tests that need to hold a derivation. */
  protected derive(password: string, salt: Buffer, params: ScryptParams, keyLen: number): Promise<Buffer> {
    return derive(password, salt, params, keyLen);
  }

  private dummyHash(): Promise<string> {
    return (this.dummy ??= this.hash(randomBytes(16).toString('hex')));
  }

  private async gated<T>(work: () => Promise<T>, source: string): Promise<T> {
    const q = this.sources.get(source) ?? { waiting: [], running: 0, servedAt: 0 };
    this.sources.set(source, q);
    if (this.running < this.concurrency) {
      this.start(q);
    } else {
      if (this.waiting >= this.maxWaiting || q.waiting.length >= this.maxWaitingPerSource) {
        this.forgetIfIdle(source, q);
        throw new RateLimitedError(1, 'too many concurrent password checks');
      }
      // The finishing holder hands its slot over directly (start() included), so a newcomer
      // cannot slip in between.
      await new Promise<void>((resolve) => {
        q.waiting.push(resolve);
        this.waiting++;
      });
    }
    try {
      return await work();
    } finally {
      q.running--;
      this.running--;
      this.forgetIfIdle(source, q);
      this.handOver();
    }
  }

  private start(q: SourceQueue): void {
    this.running++;
    q.running++;
    q.servedAt = ++this.tick;
  }

  /** The free slot goes to the waiting source that was served longest ago. */
  private handOver(): void {
    let next: SourceQueue | undefined;
    for (const q of this.sources.values()) if (q.waiting.length > 0 && (!next || q.servedAt < next.servedAt)) next = q;
    const resolve = next?.waiting.shift();
    if (!next || !resolve) return;
    this.waiting--;
    this.start(next);
    resolve();
  }

  private forgetIfIdle(source: string, q: SourceQueue): void {
    if (q.running === 0 && q.waiting.length === 0 && this.sources.get(source) === q) this.sources.delete(source);
  }
}
