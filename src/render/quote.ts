// Helpers templates use to put a value into the language they emit, given to every template
// as `q` (the render thread and the file renderer add it to the context). Each one either
// returns text that cannot leave its place in the output (a YAML scalar, an iPXE token, one line
// of a config file) or throws, which fails the render (422 TEMPLATE_FAILED) rather than serve
// an injected line. Values are checked at the door too (agent reports, catalogs, specs): these
// are the second line, and the one admins writing their own templates can use.
//
//   q.yaml(v)   a YAML scalar: plain when v is a simple word, else a JSON string (valid YAML),
//               with the line breaks YAML 1.1 knows (NEL, LS, PS) escaped too
//   q.token(v)  one iPXE/shell-like token: letters, digits and . _ ~ - : / ? = & + , @ [ ]
//   q.words(v)  space-separated tokens (kernel arguments), each as q.token
//   q.text(v)   words for an iPXE `echo`: no $ (setting expansion), no & | ; " ' \ #
//   q.line(v)   the rest of one line of a config file (ceph.conf, dnsmasq.conf, systemd):
//               any printable text without a line break or control character
//   q.ip(v)     an IPv4 or IPv6 address
//   q.name(v)   a plain name (hostname, interface): letters, digits and . _ -
//
// No imports on purpose: this file must load wherever templates run.

export class QuoteError extends Error {
  override name = 'QuoteError';
}

// C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
// eslint-disable-next-line no-control-regex -- finding control characters is this pattern's purpose
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const TOKEN = /^[A-Za-z0-9._~:/?=&+,@[\]-]+$/;
const TEXT = /^[A-Za-z0-9 .,:()_/=+@%!?[\]~-]*$/;
const NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,252}$/;
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const IPV6 = /^[0-9A-Fa-f:.]{2,45}$/;
/** A plain scalar YAML reads back as the same string (not a number, bool, null or date). */
const YAML_PLAIN = /^[A-Za-z_][A-Za-z0-9_./-]*$/;
const YAML_WORDS = /^(?:y|n|yes|no|on|off|true|false|null|nan|inf)$/i;

function text(v: unknown, what: string): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'boolean') return String(v);
  throw new QuoteError(`${what}: expected a string or number, got ${v === null ? 'null' : typeof v}`);
}

function yaml(v: unknown): string {
  if (typeof v === 'string' && YAML_PLAIN.test(v) && !YAML_WORDS.test(v)) return v;
  // JSON.stringify escapes C0 controls, quotes and backslashes, but writes U+0085, U+2028 and
  // U+2029 as they are: YAML 1.1 (cloud-init's PyYAML) reads each as a line break.
  // JSON.stringify returns undefined (its type says string) for a function or a symbol.
  const json = (JSON.stringify(v === undefined ? null : v) as string | undefined) ?? 'null';
  return json.replace(/[\u007f-\u009f\u2028\u2029\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function token(v: unknown): string {
  const s = text(v, 'q.token');
  if (!TOKEN.test(s) || s === '&&')
    throw new QuoteError('q.token: a value is not one token of letters, digits and . _ ~ - : / ? = & + , @ [ ]');
  return s;
}

function words(v: unknown): string {
  const s = text(v, 'q.words');
  if (s === '') return s;
  return s
    .split(' ')
    .map((w) => {
      if (!TOKEN.test(w) || w === '&&')
        throw new QuoteError('q.words: a value is not space-separated tokens of letters, digits and . _ ~ - : / ? = & + , @ [ ]');
      return w;
    })
    .join(' ');
}

function echo(v: unknown): string {
  const s = text(v, 'q.text');
  if (!TEXT.test(s)) throw new QuoteError('q.text: a value holds a character an iPXE line would act on');
  return s;
}

function line(v: unknown): string {
  const s = text(v, 'q.line');
  if (CONTROL.test(s)) throw new QuoteError('q.line: a value holds a line break or control character');
  return s;
}

function ip(v: unknown): string {
  const s = text(v, 'q.ip');
  const ok = IPV4.test(s) || (IPV6.test(s) && s.includes(':') && validIpv6(s));
  if (!ok) throw new QuoteError('q.ip: a value is not an IP address');
  return s;
}

/** Structural IPv6 check (net.isIP is not available everywhere templates run). */
function validIpv6(s: string): boolean {
  const halves = s.split('::');
  if (halves.length > 2) return false;
  const groups = (part: string): string[] | null => {
    if (part === '') return [];
    const g = part.split(':');
    const last = g[g.length - 1] ?? '';
    if (last.includes('.')) {
      if (!IPV4.test(last)) return null;
      g.splice(g.length - 1, 1, '0', '0');
    }
    return g.every((x) => /^[0-9A-Fa-f]{1,4}$/.test(x)) ? g : null;
  };
  const a = groups(halves[0] ?? '');
  const b = halves.length === 2 ? groups(halves[1] ?? '') : [];
  if (!a || !b) return false;
  const n = a.length + b.length;
  return halves.length === 2 ? n < 8 : n === 8;
}

function name(v: unknown): string {
  const s = text(v, 'q.name');
  if (!NAME.test(s)) throw new QuoteError('q.name: a value is not a plain name of letters, digits and . _ -');
  return s;
}

export const quote = Object.freeze({ yaml, token, words, text: echo, line, ip, name });
export type Quote = typeof quote;

/** The name templates call the helpers by (`q.yaml(v)`): the sandbox makes every export of
 * this module a global of the template, and the in-master file renderer passes it as `q`. */
export const q = quote;
