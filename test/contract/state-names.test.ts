import { describe, expect, it } from 'vitest';
import { ERROR_NAMES, isTransientStepFailure, stepErrorName } from '../../lambdas/contract/state-names.js';

describe('isTransientStepFailure', () => {
  it('calls a transient AWS fault or a TransientToolError past its retries transient, so the run can be redriven', () => {
    expect(stepErrorName('unavailable')).toBe(ERROR_NAMES.unavailable);
    expect(isTransientStepFailure(ERROR_NAMES.unavailable)).toBe(true);
    expect(isTransientStepFailure(ERROR_NAMES.internal)).toBe(true);
  });

  it('does not call an error a later attempt would meet again transient', () => {
    expect(isTransientStepFailure(stepErrorName('conflict'))).toBe(false);
    expect(isTransientStepFailure(undefined)).toBe(false);
  });
});
