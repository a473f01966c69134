import type { RunDependencies } from '../../core/runs/run-dependencies.js';

/** What every API Lambda's edge uses: the user directory (the principal's grants) and a logger. */
export type ApiEdgeDependencies = Pick<RunDependencies, 'users' | 'logger'>;
