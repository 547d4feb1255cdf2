// What renders templates, as its users see it: the errors a render answers and the lanes a
// caller chooses between (sandbox.ts, lanes.ts).
import { QuarryError, ServiceUnavailableError } from '../errors.js';

export class TemplateRenderError extends QuarryError {
  constructor(message: string, code = 'TEMPLATE_FAILED') {
    super(message, 422, code);
  }
}

/** Too many renders wait already: ask again shortly. */
export class TemplateBusyError extends ServiceUnavailableError {
  readonly retryAfterSeconds = 1;
  constructor(message: string) {
    super(message, 'TEMPLATE_BUSY');
  }
}

/** Which queue and process a render takes (lanes.ts): its caller says. */
export type RenderLane = 'boot' | 'operator';

export interface TemplateRenderer {
  render(name: string, version: number, source: string, context: Record<string, unknown>, lane?: RenderLane): Promise<string>;
  close(): Promise<void>;
}

export type SandboxLog = (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;
