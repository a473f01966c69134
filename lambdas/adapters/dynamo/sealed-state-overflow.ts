import { createHash } from 'node:crypto';
import * as z from 'zod/mini';
import { CountersignError } from '../../core/errors.js';
import type { BlobStore } from '../blob-store.js';
import type { UpdateExpression } from './update-expression.js';

/** Sealed state above this goes to the blob store: the item stays well under DynamoDB's 400 KB. */
const SEALED_STATE_INLINE_LIMIT_BYTES = 300_000;

const INLINE_ATTRIBUTE = 'sealedState';
const POINTER_ATTRIBUTE = 'sealedStatePointer';

const sealedStatePointerSchema = z.object({
  key: z.string().check(z.minLength(1)),
  sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  size: z.number().check(z.int(), z.nonnegative()),
});
type SealedStatePointer = z.infer<typeof sealedStatePointerSchema>;

/** Where a sealed state was put: inline on the run item, or a blob the item points at. */
export type StoredSealedState =
  | { readonly kind: 'inline'; readonly sealedState: Uint8Array }
  | { readonly kind: 'blob'; readonly pointer: SealedStatePointer };

/** Where an overflowing sealed state lives: content-addressed, so a retried write is idempotent. */
function sealedStateBlobKey(runId: string, sha256: string): string {
  return `runs/${runId}/state/${sha256}`;
}

/** The run item's attributes for a sealed state (a new item has neither before). */
export function sealedStateAttributes(stored: StoredSealedState): Record<string, unknown> {
  return stored.kind === 'inline'
    ? { [INLINE_ATTRIBUTE]: stored.sealedState }
    : { [POINTER_ATTRIBUTE]: stored.pointer };
}

/** Sets the sealed state on an existing run item and removes the other form, which is now stale. */
export function updateSealedState(update: UpdateExpression, stored: StoredSealedState): void {
  if (stored.kind === 'inline') update.set(INLINE_ATTRIBUTE, stored.sealedState).remove(POINTER_ATTRIBUTE);
  else update.set(POINTER_ATTRIBUTE, stored.pointer).remove(INLINE_ATTRIBUTE);
}

/**
 * A run's sealed state on its item, or over 300,000 bytes in the blob store with a pointer
 * `{key, sha256, size}` on the item. Reading checks the pointer names this run's blob and that
 * the blob matches its checksum: a swapped or truncated blob is refused, never opened.
 *
 * @example
 * const overflow = new SealedStateOverflow(blobStore);
 * const stored = await overflow.store(runId, sealedState);
 * const bytes = await overflow.load(runId, item);
 */
export class SealedStateOverflow {
  /** @param blobStore - none: a state over the limit is refused with a `configuration` error */
  public constructor(private readonly blobStore: BlobStore | undefined) {}

  /** Puts a state over the limit in the blob store first; the item write that follows points at it. */
  public async store(runId: string, sealedState: Uint8Array): Promise<StoredSealedState> {
    if (sealedState.byteLength <= SEALED_STATE_INLINE_LIMIT_BYTES) return { kind: 'inline', sealedState };
    if (!this.blobStore) {
      throw new CountersignError(
        'configuration',
        'The sealed run state is larger than a DynamoDB item allows and no blob store is configured.',
        { expose: false },
      );
    }
    const sha256 = createHash('sha256').update(sealedState).digest('hex');
    const pointer = { key: sealedStateBlobKey(runId, sha256), sha256, size: sealedState.byteLength };
    await this.blobStore.put(pointer.key, sealedState);
    return { kind: 'blob', pointer };
  }

  /** The sealed state of the run item `item`, read under the run id `runId`. */
  public async load(runId: string, item: Record<string, unknown>): Promise<Uint8Array> {
    const inline = item[INLINE_ATTRIBUTE];
    if (inline instanceof Uint8Array) return inline;
    const pointer = sealedStatePointerSchema.safeParse(item[POINTER_ATTRIBUTE]);
    if (!pointer.success) {
      throw new CountersignError('sealed-state-rejected', 'The sealed run state was refused: it is missing.');
    }
    const { key, sha256, size } = pointer.data;
    if (key !== sealedStateBlobKey(runId, sha256)) {
      throw new CountersignError(
        'sealed-state-rejected',
        'The sealed run state was refused: its pointer names another blob.',
      );
    }
    if (!this.blobStore) {
      throw new CountersignError(
        'configuration',
        'A sealed run state is stored in a blob store and none is configured.',
        { expose: false },
      );
    }
    const bytes = await this.blobStore.get(key);
    if (!bytes) {
      throw new CountersignError(
        'sealed-state-rejected',
        'The sealed run state was refused: its blob is missing.',
      );
    }
    const actual = createHash('sha256').update(bytes).digest('hex');
    if (bytes.byteLength !== size || actual !== sha256) {
      throw new CountersignError(
        'sealed-state-rejected',
        'The sealed run state was refused: its blob does not match its checksum.',
      );
    }
    return bytes;
  }
}
