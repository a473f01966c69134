import { describe, expect, it } from 'vitest';
import { answerForCall, decideCall } from '../../../lambdas/core/external-runs/call-answer.js';

const invoice = { index: 1, arguments: { amountCents: 90_000 }, edited: { by: 'ana' } };

describe('the answer for one call of an external run', () => {
  it('gives an approved edited call the arguments to run and its editor, and an unedited one neither', () => {
    // Act
    const edited = answerForCall({ decision: 'approve' }, invoice);
    const unedited = answerForCall({ decision: 'approve' }, { index: 0, arguments: { customer: 'ACME' } });

    // Assess
    expect(edited).toEqual({
      decision: 'approved',
      arguments: { amountCents: 90_000 },
      edited: { by: 'ana' },
    });
    expect(unedited).toEqual({ decision: 'approved' });
  });

  it('gives a refused edited call its reason only: nothing of the edit is to run', () => {
    // Act
    const refused = answerForCall(
      {
        decision: 'approve',
        choices: [{ index: 1, tool: 'billing/send_invoice', decision: 'reject', reason: 'no' }],
      },
      invoice,
    );
    const rejected = answerForCall({ decision: 'reject', reason: 'not this month' }, invoice);

    // Assess
    expect(refused).toEqual({ decision: 'rejected', reason: 'no' });
    expect(rejected).toEqual({ decision: 'rejected', reason: 'not this month' });
    expect(decideCall({ decision: 'approve' }, 7)).toEqual({ decision: 'approved' });
  });
});
