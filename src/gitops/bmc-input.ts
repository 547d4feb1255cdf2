// A Node document's `bmc:` → the node's BmcSpec. A file lives in git, so its password comes by
// reference only: `passwordFrom: { env: QUARRY_BMC_<NAME> }`, read from Quarry's environment at
// each apply (a plaintext `password:` is refused). The value goes into the store, sealed like
// every secret field; no error names it.
import type { FieldError } from '../errors.js';
import type { BmcSpec } from '../model/kinds.js';

export interface BmcDocInput {
  address: string;
  port?: number;
  username: string;
  passwordFrom?: { env: string };
  password?: string;
}

/** IPMI v2 passwords: printable ASCII, 1 to 20 bytes (what the API's schema says too). */
const PASSWORD = /^[\x20-\x7e]{1,20}$/;

export function bmcFromDoc(input: BmcDocInput, env: Readonly<Record<string, string | undefined>>, errors: FieldError[]): BmcSpec | null {
  if (input.password !== undefined) {
    errors.push({
      path: '/spec/bmc/password',
      message:
        'a BMC password is never written in a file (it would be in git): give passwordFrom: { env: QUARRY_BMC_<NAME> } and set that variable for Quarry',
    });
    return null;
  }
  if (!input.passwordFrom) {
    errors.push({ path: '/spec/bmc/passwordFrom', message: 'the BMC needs its password: passwordFrom: { env: QUARRY_BMC_<NAME> }' });
    return null;
  }
  const name = input.passwordFrom.env;
  const password = env[name];
  if (password === undefined || password === '') {
    errors.push({ path: '/spec/bmc/passwordFrom/env', message: `Quarry's environment has no variable ${name} (or it is empty)` });
    return null;
  }
  if (!PASSWORD.test(password)) {
    errors.push({
      path: '/spec/bmc/passwordFrom/env',
      message: `${name} does not hold an IPMI password (printable ASCII, 1 to 20 characters)`,
    });
    return null;
  }
  return { address: input.address, username: input.username, password, ...(input.port !== undefined ? { port: input.port } : {}) };
}
