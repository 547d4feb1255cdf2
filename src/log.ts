// One line per event, JSON, to stderr: machine-readable for operators' log shippers. Fields
// whose names say they hold a secret are masked here, the one place every log line passes.

export type Level = 'debug' | 'info' | 'warn' | 'error';
export type Logger = (level: Level, message: string, fields?: Record<string, unknown>) => void;

const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET = /pass(word)?|secret|token|key(ring)?|credential|cookie|authorization/i;

export function redact(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (SECRET.test(k)) out[k] = '***';
    else if (v instanceof Error) out[k] = v.message;
    else if (v && typeof v === 'object' && !Array.isArray(v)) out[k] = redact(v as Record<string, unknown>);
    else out[k] = v;
  }
  return out;
}

export function createLogger(min: Level = 'info', write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  return (level, message, fields) => {
    if (ORDER[level] < ORDER[min]) return;
    const line = { time: new Date().toISOString(), level, message, ...(fields ? redact(fields) : {}) };
    write(`${JSON.stringify(line)}\n`);
  };
}

export const silentLogger: Logger = () => {};
