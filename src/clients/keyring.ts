// The keyring format lives in model (it is pure and the API renders keyrings too); the
// clients re-export it where their callers expect it.
export { isCephxKey, keyringFile, keyringText, newCephxKey, type KeyringOptions } from '../model/keyring.js';
