// A fetch whose requests leave from a chosen local address. The lab gives each simulated
// machine its own loopback address (Linux routes all of 127/8 to lo), as a real machine has its
// own DHCP lease, so the master sees each machine's real source address and enrollment's
// address binding is exercised for real. Node's global fetch cannot pick the source address;
// undici (the library Node's fetch is built on) can, through its Agent's localAddress.
import { Agent, fetch as undiciFetch } from 'undici';

export type FetchLike = (
  url: URL | string,
  init?: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal },
) => Promise<Response>;

export function boundFetch(localAddress: string): FetchLike {
  // One agent per machine: its connections are kept alive, as fetch keeps them (a machine
  // heartbeats every few seconds, and a new TCP connection per call costs the master).
  const dispatcher = new Agent({ localAddress });
  // undici's Response is the same WHATWG Response the global fetch answers with.
  return async (url, init = {}) => undiciFetch(url, { ...init, dispatcher });
}
