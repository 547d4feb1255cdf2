// Templates: ejs sources Quarry renders for machines (iPXE scripts, cloud-init, units) and for
// itself (ceph.conf, dnsmasq.conf). A Template holds the current source; every source it ever
// had is a TemplateVersion of its own, so a replaced source stays retrievable and one document
// never grows with its history.
import { nameUuid } from './ids.js';

type JsonSchema = Record<string, unknown>;

export const TemplateKind = { Template: 'Template', TemplateVersion: 'TemplateVersion' } as const;

/** Names are file names without `.ejs`: they can never hold a path separator, `..` or NUL. */
export const TEMPLATE_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_-]*(\\.[A-Za-z0-9_-]+)*$';
export const TEMPLATE_NAME_MAX = 64;
const nameRe = new RegExp(TEMPLATE_NAME_PATTERN);
export const isTemplateName = (name: string): boolean => name.length <= TEMPLATE_NAME_MAX && nameRe.test(name);

export const templateId = (name: string): string => nameUuid('quarry/template', name);
export const templateVersionId = (name: string, version: number): string => nameUuid('quarry/template-version', `${name}@${version}`);

export interface TemplateSpec {
  name: string;
  description: string;
  /** The current source; the same text as TemplateVersion `version`. */
  source: string;
  /** 1 for the shipped file, +1 per accepted replacement. */
  version: number;
  /** Where the rendered file goes on the target node; '' when it is not a file there. */
  path: string;
  /** Run on the node after the file is written; '' for none. */
  postHook: string;
  /** False while the source is the shipped file's: a newer shipped file replaces it at start. */
  edited: boolean;
}

export interface TemplateVersionSpec {
  name: string;
  version: number;
  source: string;
  createdAt: string;
}

const name = { type: 'string', pattern: TEMPLATE_NAME_PATTERN, maxLength: TEMPLATE_NAME_MAX };
const source = { type: 'string', maxLength: 1024 * 1024 };
const version = { type: 'integer', minimum: 1 };
const empty = { type: 'object', additionalProperties: false, properties: {} };

/** A template's settings, as PUT /templates/{name}/settings and a specs file give them. */
export const templateSettingsSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    path: { type: 'string', maxLength: 4096, description: 'where the rendered file goes on the node' },
    postHook: { type: 'string', maxLength: 4096, description: 'command run on the node after the file is written' },
  },
};

export const templateSchemas = {
  spec: {
    type: 'object',
    required: ['name', 'description', 'source', 'version', 'path', 'postHook', 'edited'],
    additionalProperties: false,
    properties: {
      name,
      description: { type: 'string', maxLength: 1024 },
      source,
      version,
      path: { type: 'string', maxLength: 4096 },
      postHook: { type: 'string', maxLength: 4096 },
      edited: { type: 'boolean' },
    },
  },
  status: empty,
} satisfies { spec: JsonSchema; status: JsonSchema };

export const templateVersionSchemas = {
  spec: {
    type: 'object',
    required: ['name', 'version', 'source', 'createdAt'],
    additionalProperties: false,
    properties: { name, version, source, createdAt: { type: 'string', format: 'date-time' } },
  },
  status: empty,
} satisfies { spec: JsonSchema; status: JsonSchema };
