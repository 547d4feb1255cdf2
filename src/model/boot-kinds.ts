// What the controllers heard of a node's network boots, kept in the store: every controller
// answers boots, followers too, but only the leader's memory feeds the node loop (boot-loop
// detection, the unapproved nodes' last seen). Any controller writes the boots it answered; the
// leader reads them at its election and follows them while it leads (src/fleet/boot-records.ts).
import { fleetRecordSpecSchema } from './fleet-kinds.js';

type JsonSchema = Record<string, unknown>;

export const BootKind = { NodeBoots: 'NodeBoots' } as const;
export type BootKind = (typeof BootKind)[keyof typeof BootKind];

/** A node's most recent boots kept, in memory as in its record: enough for the boot-loop limit
 * (BOOT_LOOP_MAX_BOOTS is at most 30), and a record stays small whatever a machine does. */
export const MAX_BOOTS_KEPT = 32;

/** The boots any controller answered (newest last, at most MAX_BOOTS_KEPT); when the machine
 * last asked, counted as a boot or not; and the address its last request that was noted came
 * from, with when. */
export interface NodeBootsStatus {
  boots: Array<{ at: string; stage: 'pxe' | 'image' }>;
  seenAt: string;
  bootAddress?: { address: string; at: string };
}

const timestamp = { type: 'string', format: 'date-time' } as const;

export const nodeBootsSchemas: { spec: JsonSchema; status: JsonSchema } = {
  spec: fleetRecordSpecSchema,
  status: {
    type: 'object',
    required: ['boots', 'seenAt'],
    additionalProperties: false,
    properties: {
      boots: {
        type: 'array',
        maxItems: MAX_BOOTS_KEPT,
        items: {
          type: 'object',
          required: ['at', 'stage'],
          additionalProperties: false,
          properties: { at: timestamp, stage: { enum: ['pxe', 'image'] } },
        },
      },
      seenAt: timestamp,
      // As the node's status.bootAddress (the source address of an HTTP request).
      bootAddress: {
        type: 'object',
        required: ['address', 'at'],
        additionalProperties: false,
        properties: { address: { type: 'string', minLength: 1, maxLength: 64 }, at: timestamp },
      },
    },
  },
};
