// API tokens: long-lived credentials for scripts and the CLI (docs/api-conventions.md, "API
// tokens"). One `ApiToken` document per token; the secret part is kept only as its SHA-256.
// And the key session tokens and signed links are signed with: one `SigningKey` per store, so
// every controller sharing the store (STORE=etcd) accepts what any of them signed.

type JsonSchema = Record<string, unknown>;

export const TokenKind = { ApiToken: 'ApiToken', SigningKey: 'SigningKey' } as const;

export const TOKEN_SCOPES = ['read', 'write'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** What a token's name may be: a label its owner chooses, safe in a log line and a header. */
export const TOKEN_NAME_PATTERN = '^[A-Za-z0-9._@-]{1,64}$';

export interface ApiTokenSpec {
  /** The owner: a user's id. The token acts as that user, with its scope. */
  userId: string;
  name: string;
  scope: TokenScope;
  /** Hex SHA-256 of the secret part. */
  secretHash: string;
  createdAt: string;
  expiresAt: string;
}

export interface ApiTokenStatus {
  /** Coarse: written at most once a minute per token, so a busy script costs no store write
   * per request. */
  lastUsedAt?: string;
}

const timestamp = { type: 'string', format: 'date-time' } as const;

export const apiTokenSchemas: { spec: JsonSchema; status: JsonSchema } = {
  spec: {
    type: 'object',
    required: ['userId', 'name', 'scope', 'secretHash', 'createdAt', 'expiresAt'],
    additionalProperties: false,
    properties: {
      userId: { type: 'string', format: 'uuid' },
      name: { type: 'string', pattern: TOKEN_NAME_PATTERN },
      scope: { enum: [...TOKEN_SCOPES] },
      secretHash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      createdAt: timestamp,
      expiresAt: timestamp,
    },
  },
  status: { type: 'object', additionalProperties: false, properties: { lastUsedAt: timestamp } },
};

/** The one SigningKey of a store. */
export const SIGNING_KEY_ID = 'default';

export interface SigningKeySpec {
  /** 256 random bits or more, base64url. Sealed at rest (secret-fields.ts); no answer, audit
   * entry, event or log line carries it. */
  key: string;
  /** `generated` by the store's first controller, or `migrated` from the key file an older
   * Quarry kept in its STATE_DIR (so the sessions it had signed survived the upgrade). */
  origin: 'generated' | 'migrated';
}

export const signingKeySchemas: { spec: JsonSchema; status: JsonSchema } = {
  spec: {
    type: 'object',
    required: ['key', 'origin'],
    additionalProperties: false,
    // 43 characters of base64url: 32 bytes, HS256's minimum.
    properties: { key: { type: 'string', pattern: '^[A-Za-z0-9_-]{43,}$' }, origin: { enum: ['generated', 'migrated'] } },
  },
  status: { type: 'object', additionalProperties: false, properties: {} },
};
