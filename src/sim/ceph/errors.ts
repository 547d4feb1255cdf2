// A refusal in Ceph's own terms: the errno the CLI exits with and the message it prints after
// "Error EXXX: ". Mutations of the simulated cluster throw it; the runner turns it into the
// CommandError a real `ceph` call would have produced.
export const ERRNOS = { EPERM: 1, ENOENT: 2, EAGAIN: 11, EACCES: 13, EBUSY: 16, EEXIST: 17, EINVAL: 22, ERANGE: 34 } as const;
export type ErrnoName = keyof typeof ERRNOS;

export class CephRefusal extends Error {
  readonly errno: number;
  constructor(
    readonly errnoName: ErrnoName,
    message: string,
  ) {
    super(message);
    this.name = 'CephRefusal';
    this.errno = ERRNOS[errnoName];
  }

  /** stderr as the CLI prints it. */
  get stderr(): string {
    return `Error ${this.errnoName}: ${this.message}\n`;
  }
}
