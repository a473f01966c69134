import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRunState } from '../../../lambdas/core/runs/run-state.js';

const fixtures = new URL('../../fixtures/run-state/', import.meta.url);

describe('parseRunState', () => {
  for (const file of readdirSync(fixtures).filter(
    (name) => name.endsWith('.json') && !name.startsWith('refused-'),
  )) {
    it(`still reads the immutable fixture ${file}`, () => {
      // Prepare
      const raw = JSON.parse(readFileSync(new URL(file, fixtures), 'utf8'));

      // Act
      const state = parseRunState(raw);

      // Assess
      expect(state.runId).toBe(raw.runId);
      expect(state.pendingCalls.length).toBe(raw.pendingCalls.length);
      expect(state.transcript.length).toBe(raw.transcript.length);
    });
  }

  it('reads a state without the acting-user snapshot (written before it existed)', () => {
    const raw = JSON.parse(readFileSync(new URL('v1-waiting.json', fixtures), 'utf8'));
    expect(parseRunState(raw).actingUser).toBeUndefined();
  });

  it('refuses an unknown schema version as a sealed-state refusal', () => {
    expect(() =>
      parseRunState({ schemaVersion: 6, runId: 'r', turn: 0, transcript: [], pendingCalls: [] }),
    ).toThrow(/unknown shape/);
  });
});
