// How the etcd client talks to etcd: the gRPC channel's settings and each call's deadline.
//
// Streams (watches, lease keepalives) have no deadline: one would end the read cache's watch
// at each expiry, and the cache serves nothing until its watch has caught up again. Under
// 10,000 agents' heartbeats that catch-up outlasted the next expiry (10 s), so every read went
// to etcd, which slowed the watch further. What ends a stream instead, as with etcd's own
// client and Kubernetes:
// - a member gone (its connection closed, or silent past the keepalive ping's timeout);
// - a member that lost its leader (cut off from the others: it would deliver nothing new, and
//   a cache fed by it would go stale unnoticed): every call asks etcd to require a leader
//   ("hasleader", rpctypes.MetadataRequireLeaderKey), so etcd refuses it at once on such a
//   member and ends the streams it serves a few election timeouts after the leader was lost.
import { InterceptingCall, type CallOptions, type ChannelOptions, type Interceptor } from '@grpc/grpc-js';
import type { CallContext } from 'etcd3';

/** Pings on a connection with calls in flight; etcd refuses pings closer than 5 s by default
 * (--grpc-keepalive-min-time). */
const KEEPALIVE_MS = 10_000;
const KEEPALIVE_TIMEOUT_MS = 5_000;

const requireLeader: Interceptor = (options, next) =>
  new InterceptingCall(next(options), {
    start(metadata, listener, start) {
      metadata.set('hasleader', 'true');
      start(metadata, listener);
    },
  });

export function etcdChannelOptions(): ChannelOptions {
  return {
    // grpc-js refuses messages over 4 MiB by default, and etcd's are larger in a catch-up: a
    // watch behind by a few thousand revisions gets them in one response (10,000 agents'
    // heartbeat records made 8 MB ones), and a list's page holds 500 values. Refused, a stream
    // ends and resumes at the same revision, to be refused again, for ever. etcd's own client
    // takes any size (MaxCallRecvMsgSize is math.MaxInt32); so do we.
    'grpc.max_receive_message_length': -1,
    'grpc.keepalive_time_ms': KEEPALIVE_MS,
    'grpc.keepalive_timeout_ms': KEEPALIVE_TIMEOUT_MS,
    interceptors: [requireLeader],
  };
}

/** A unary call etcd has not answered by `timeoutMs` fails (and is retried elsewhere); a
 * stream runs until it breaks (see above). */
export function etcdCallOptions(timeoutMs: number): (context: CallContext) => CallOptions {
  return (context) => (context.isStream ? {} : { deadline: Date.now() + timeoutMs });
}
