// Two sandboxes, two render processes, two queues. The boot lane renders what machines need to
// boot and install and what the master renders for itself; the operator lane renders every
// other template asked for publicly. A flood of renders of a slow template fills only the
// operator lane, whose bounded queue then answers 503 TEMPLATE_BUSY at once, while boots go
// on in their own process. Which lane a render takes is its caller's decision (the boot
// routes, the public render route by template name, the master's own renders): see
// TemplateLibrary.render and README "Templates and network boot".
import { TemplateSandbox, type RenderLane, type SandboxOptions, type TemplateRenderer } from './sandbox.js';

export interface LaneOptions extends Omit<SandboxOptions, 'lane' | 'maxQueued' | 'idleMs'> {
  /** Renders waiting in the operator lane before it refuses more. */
  operatorQueue: number;
  /** The boot lane's bound: only a flood of boot requests reaches it. */
  bootQueue?: number;
}

export class TemplateLanes implements TemplateRenderer {
  readonly boot: TemplateSandbox;
  readonly operator: TemplateSandbox;

  constructor(opts: LaneOptions) {
    const { operatorQueue, bootQueue, ...common } = opts;
    this.boot = new TemplateSandbox({ ...common, lane: 'boot', maxQueued: bootQueue ?? 1_024 });
    // Public renders of other templates are rare: their process (about 40 MiB) goes when idle.
    this.operator = new TemplateSandbox({ ...common, lane: 'operator', maxQueued: operatorQueue, idleMs: 60_000 });
  }

  render(name: string, version: number, source: string, context: Record<string, unknown>, lane: RenderLane = 'operator'): Promise<string> {
    return (lane === 'boot' ? this.boot : this.operator).render(name, version, source, context);
  }

  async close(): Promise<void> {
    await Promise.all([this.boot.close(), this.operator.close()]);
  }
}
