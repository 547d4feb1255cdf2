// A run's deadline. It can be paused: while a question waits for an operator the clock of
// the step stops, or every question would race the run's timeout.

export class Deadline {
  private timer: NodeJS.Timeout | null = null;
  private left: number;
  private since = 0;
  private cleared = false;

  constructor(
    ms: number,
    private readonly onExpire: () => void,
  ) {
    this.left = ms;
    this.resume();
  }

  pause(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.left -= performance.now() - this.since;
  }

  resume(): void {
    if (this.timer || this.cleared) return;
    this.since = performance.now();
    this.timer = setTimeout(
      () => {
        this.cleared = true;
        this.timer = null;
        this.onExpire();
      },
      Math.max(0, this.left),
    );
  }

  clear(): void {
    this.cleared = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
