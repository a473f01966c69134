import { CountersignError } from './errors.js';
import type { SealPurpose, StateSealer } from './ports.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Seals a JSON value for one run and purpose. */
export async function sealJson(
  sealer: StateSealer,
  purpose: SealPurpose,
  runId: string,
  value: unknown,
): Promise<Uint8Array> {
  return sealer.seal(purpose, runId, encoder.encode(JSON.stringify(value)));
}

/** Unseals and parses a JSON value; the sealer refuses bytes of another run or purpose. */
export async function unsealJson(
  sealer: StateSealer,
  purpose: SealPurpose,
  runId: string,
  sealed: Uint8Array,
): Promise<unknown> {
  const plaintext = await sealer.unseal(purpose, runId, sealed);
  try {
    return JSON.parse(decoder.decode(plaintext));
  } catch {
    throw new CountersignError(
      'sealed-state-rejected',
      'The sealed run state was refused: it is not valid JSON.',
    );
  }
}
