// The etcd read cache's memory at a bench's size: two more backends on the bench Quarry's prefix
// and secrets key, one without a cache (the etcd client's own share) and one with, each measured
// as V8's heap after full collections. Needs node --expose-gc.
import { EtcdBackend, SecretBox, secretFieldsCodec, unwatchedPrefixes, type StoredDoc } from '../src/store/index.js';

export interface CacheHeap {
  /** The cache's share of the heap, the client's taken out. */
  bytes: number;
  /** Documents it holds. */
  keys: number;
}

export async function cacheHeap(endpoints: string[], prefix: string, secretsKey: Buffer): Promise<CacheHeap> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('cacheHeap needs node --expose-gc');
  const heap = (): number => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const codec = secretFieldsCodec(new SecretBox(secretsKey, 'SECRETS_KEY'));
  const open = async (cache: boolean): Promise<EtcdBackend<StoredDoc>> => {
    // As the controller opens it: the heartbeat records are not the cache's.
    const b = new EtcdBackend<StoredDoc>({ endpoints, prefix, codec, cache, unwatched: unwatchedPrefixes() });
    await b.open();
    return b;
  };
  const h0 = heap();
  const bare = await open(false);
  const h1 = heap();
  const cached = await open(true);
  const h2 = heap();
  const keys = cached.cacheStats()?.keys ?? 0;
  await cached.close();
  await bare.close();
  return { bytes: h2 - h1 - (h1 - h0), keys };
}
