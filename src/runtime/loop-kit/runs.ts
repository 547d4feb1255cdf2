// The little of a task run the kit's rules read (reconcilers/shared/runs.ts has the full view).
export interface RunInfoLike {
  state: string;
  completedAt: number | null;
}
