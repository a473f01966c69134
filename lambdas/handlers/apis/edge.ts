import type { RunDependencies } from '../../core/runs/run-dependencies.js';

/**
 * What every API Lambda's edge uses: the user directory (the principal's grants), a logger, and
 * the settings' mapping of identity-provider groups to grants.
 */
export type ApiEdgeDependencies = Pick<RunDependencies, 'users' | 'logger'> &
  Partial<Pick<RunDependencies, 'settings'>>;
