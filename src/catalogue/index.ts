// The catalogue of daemons, steps and operations (docs/catalogue.md): below every other area.
export * from './daemons.js';
export * from './steps.js';
export * from './operations.js';
export * from './validate.js';

import type { DAEMONS } from './daemons.js';
import type { StepName } from './steps.js';

// Compile-time: every step a daemon names is in STEPS (a typo is a type error here).
type DaemonStepNames = {
  [T in keyof typeof DAEMONS]: (typeof DAEMONS)[T]['steps'][keyof (typeof DAEMONS)[T]['steps']];
}[keyof typeof DAEMONS];
type Flat<X> = X extends readonly (infer E)[] ? E : X;
export type AssertDaemonStepsAreSteps = Flat<DaemonStepNames> extends StepName ? true : never;
export const daemonStepsAreSteps: AssertDaemonStepsAreSteps = true;
