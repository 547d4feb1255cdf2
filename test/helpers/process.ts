// Whether a process is still there, for tests that check a killed command is really gone.
export { alive } from '../../src/exec/processes.js';
