// A lab machine's way to several controllers, as a real node reaches "the master" through a
// virtual address that moves to a live controller: requests go to the current controller, and a
// connection error moves the machine on to the next one in the list. Any controller will do:
// a follower relays the agent's calls to the leader (README, "Several controllers"), and the
// session cookies are good at every controller of one store.
import type { FetchLike } from '../fleet/bound-fetch.js';

/** A refused connection never reached a server: sending the same request elsewhere is safe. */
const refused = (err: unknown): boolean => {
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  return cause?.code === 'ECONNREFUSED';
};

export class FailoverFetch {
  private current = 0;

  constructor(
    private readonly bases: readonly string[],
    private readonly inner: FetchLike,
  ) {
    if (bases.length === 0) throw new Error('a lab machine needs at least one controller URL');
  }

  /** Where requests go first: the URL the machine's session is built on. */
  get base(): string {
    return this.bases[0]!;
  }

  /** `url` is under `base`; it is sent to the current controller instead. A refused
   * connection tries the next controllers at once; any other network error (a connection cut
   * mid-request: it may have been served) is thrown, and the next call goes to the next one. */
  readonly fetch: FetchLike = async (url, init) => {
    for (let tries = 1; ; tries++) {
      const at = this.current;
      try {
        return await this.inner(this.rebase(url, at), init);
      } catch (err) {
        // Another call may have moved on already: move once per failed controller.
        if (this.current === at) this.current = (at + 1) % this.bases.length;
        if (!refused(err) || tries >= this.bases.length || init?.signal?.aborted) throw err;
      }
    }
  };

  private rebase(url: URL | string, at: number): URL {
    const u = new URL(url);
    const to = new URL(this.bases[at]!);
    u.protocol = to.protocol;
    u.host = to.host;
    return u;
  }
}
