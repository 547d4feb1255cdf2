// JSON Schemas shared by several routes: what goes in (validated) and what comes out (documented).
import type { JsonSchema } from '../model/schemas.js';
import { MIN_PASSWORD_LENGTH } from './auth/index.js';

export const uuidSchema: JsonSchema = { type: 'string', format: 'uuid' };
export const macSchema: JsonSchema = {
  type: 'string',
  pattern: '^[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}$',
  description: 'aa:bb:cc:dd:ee:ff (or with -)',
};

/** `{ "status": "<word>" }`, the answer of every operation without a natural body. */
export const statusSchema = (word: string, withId = false): JsonSchema => ({
  type: 'object',
  required: withId ? ['status', 'id'] : ['status'],
  additionalProperties: false,
  properties: { status: { const: word }, ...(withId ? { id: uuidSchema } : {}) },
});

export const usernameSchema: JsonSchema = {
  type: 'string',
  pattern: '^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$',
  description: 'letters, digits and . _ @ -, up to 64; unique regardless of case',
};

export const newPasswordSchema: JsonSchema = {
  type: 'string',
  minLength: MIN_PASSWORD_LENGTH,
  maxLength: 1024,
  description: `at least ${MIN_PASSWORD_LENGTH} characters`,
};

export const emailSchema: JsonSchema = { type: 'string', format: 'email', maxLength: 254 };
export const fullNameSchema: JsonSchema = { type: 'string', minLength: 1, maxLength: 256 };

export const userSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'username', 'name', 'email', 'isAdmin'],
  additionalProperties: false,
  properties: {
    id: uuidSchema,
    username: { type: 'string' },
    name: { type: 'string' },
    email: { type: 'string', description: 'empty for the first admin until set' },
    isAdmin: { type: 'boolean' },
  },
};

export const object = (properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({
  type: 'object',
  ...(required.length ? { required } : {}),
  additionalProperties: false,
  properties,
});

/** A status condition as the API shows it (Ready, Degraded, ...). */
export const conditionView: JsonSchema = object(
  {
    type: { type: 'string' },
    status: { enum: ['True', 'False', 'Unknown'] },
    reason: { type: 'string' },
    message: { type: 'string' },
    lastTransitionTime: { type: 'string' },
    observedGeneration: { type: 'integer' },
  },
  ['type', 'status', 'reason', 'message', 'lastTransitionTime', 'observedGeneration'],
);
