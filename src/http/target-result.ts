// How one target's result of an operation (services/invocations.ts) answers a single-target
// request (POST /ceph/mon, /ceph/mgr, /gateways/rgw, ...): as an HTTP status.
import { ConflictError, NotFoundError } from '../errors.js';
import type { TargetResult } from '../services/invocations.js';

/** A single-target create answers like the bulk form would have, as an HTTP status. */
export function single(result: TargetResult | undefined): { status: 'scheduled' } {
  if (!result) throw new Error('no result');
  if (result.status === 'scheduled') return { status: 'scheduled' };
  if (result.code) throw new ConflictError(result.reason, result.code);
  if (/^unknown (node|disk)$/.test(result.reason)) throw new NotFoundError(`${result.reason} ${result.id}`);
  throw new ConflictError(result.reason, 'OPERATION_NOT_OFFERED');
}
