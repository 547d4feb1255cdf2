// Links a machine can follow without a session. iPXE and an installer carry no cookies, yet
// must download the kernel, initrd and root file system of their image; the boot script hands
// them links signed by Quarry (HMAC-SHA-256 over the path and an expiry), each good for one
// file for a limited time. A link cannot be forged or widened to another file, and it dies on
// its own: the route stays authenticated, by the link instead of by a session.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { AuthError } from '../errors.js';
import type { Clock } from '../model/clock.js';

export interface SignedQuery {
  expires: number;
  signature: string;
}

export class SignedUrls {
  private readonly key: Buffer;

  /** `rootKey` is derived from, never used directly: these links and session tokens do not share a key. */
  constructor(
    rootKey: Uint8Array,
    private readonly clock: Clock,
    private readonly ttlSeconds = 3600,
  ) {
    this.key = Buffer.from(hkdfSync('sha256', rootKey, Buffer.alloc(0), 'quarry signed download links', 32));
  }

  /** `path` with `?expires=&signature=` appended. */
  sign(path: string): string {
    const expires = Math.floor(this.clock.now() / 1000) + this.ttlSeconds;
    return `${path}?expires=${expires}&signature=${this.mac(path, expires)}`;
  }

  /** AuthError (401) for a missing, wrong or expired signature. */
  verify(path: string, q: Partial<SignedQuery>): void {
    const { expires, signature } = q;
    if (typeof expires !== 'number' || typeof signature !== 'string')
      throw new AuthError('this link needs its expires and signature parameters');
    const want = Buffer.from(this.mac(path, expires), 'hex');
    const got = Buffer.from(signature, 'hex');
    if (got.length !== want.length || !timingSafeEqual(got, want)) throw new AuthError('the link signature is not valid');
    if (expires * 1000 < this.clock.now()) throw new AuthError('the link has expired; ask /boot/config for a new one');
  }

  private mac(path: string, expires: number): string {
    return createHmac('sha256', this.key).update(`${expires}\n${path}`).digest('hex');
  }
}
