// Status vocabulary shared by every kind: a phase plus conditions, as Kubernetes does, so an
// operator can always read *why* an object is not Ready.

export const ConditionType = {
  Ready: 'Ready',
  Progressing: 'Progressing',
  Degraded: 'Degraded',
  Blocked: 'Blocked',
} as const;
export type ConditionType = (typeof ConditionType)[keyof typeof ConditionType] | (string & {});

export interface Condition {
  type: ConditionType;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration: number;
}

export interface CommonStatus {
  phase?: string;
  conditions?: Condition[];
  observedGeneration?: number;
}
