import type { DecisionRecord } from '../approvals/decision-record.js';
import { CountersignError } from '../errors.js';
import { refusal } from '../persisted-shape.js';
import type { Clock } from '../ports.js';
import { TEXTS } from '../texts.js';
import {
  CHAIN_ENTRY_SCHEMA_VERSION,
  type ChainEntry,
  type CurrentChainEntry,
  RECEIPT_SIGNING_ALGORITHM,
  readableChainEntrySchema,
  type SignedChainEntry,
} from './chain-entry.js';
import { hashEntry, signedMessageOf } from './entry-hashes.js';
import type { ReceiptChainStore, ReceiptSigner } from './receipt-ports.js';

/** What the appender fills in: the link to the chain, and the signature. */
type AppendedField = 'schemaVersion' | 'sequence' | 'previousHash' | 'recordedAt' | 'signer' | 'signature';
type DraftOf<Entry> = Entry extends ChainEntry ? Omit<Entry, AppendedField> : never;

/** An entry as its recorder describes it, before it is linked into the chain (and signed): the current version. */
export type EntryDraft = DraftOf<CurrentChainEntry>;

export interface ChainDependencies {
  chain: ReceiptChainStore;
  /** Absent where a function may not sign: it appends cancels and expiries only. */
  signer?: ReceiptSigner | undefined;
  clock: Clock;
}

export type AppendChainOutcome =
  | { kind: 'appended'; entry: ChainEntry }
  /** An entry for the same record is on the chain already (a retry, or a racing request). */
  | { kind: 'already-recorded'; entry: ChainEntry };

/** Appends race only between the few requests of one run; a handful of rounds settles them. */
const MAXIMUM_ATTEMPTS = 5;

/**
 * Appends one entry to its run's chain, exactly once: an entry stands for one record (the decision
 * of a turn, one approver's approval of a turn and digest, the run's cancel, its expiry), and an
 * entry for a record already on the chain is not appended again, however often a retry asks. The
 * entry names the hash of the last entry and is written with a conditional put on (run, sequence):
 * a writer that lost the position reads the chain again and either finds its record there or
 * appends after the winner. Approvals and decisions are signed before the put.
 *
 * @example
 * await appendChainEntry(dependencies, { kind: 'expiry', runId, turn: 3, expiredAt: now });
 */
export async function appendChainEntry(
  dependencies: ChainDependencies,
  draft: EntryDraft,
): Promise<AppendChainOutcome> {
  const origin = originOf(draft);
  for (let attempt = 0; attempt < MAXIMUM_ATTEMPTS; attempt += 1) {
    const chain = await readChain(dependencies.chain, draft.runId);
    const existing = chain.find((entry) => originOf(entry) === origin);
    if (existing) return { kind: 'already-recorded', entry: existing };
    const last = chain.at(-1);
    const entry = await completeEntry(dependencies, draft, {
      schemaVersion: CHAIN_ENTRY_SCHEMA_VERSION,
      sequence: chain.length,
      previousHash: last === undefined ? null : hashEntry(last),
      recordedAt: dependencies.clock.now().toISOString(),
    });
    const outcome = await dependencies.chain.appendEntry(entry);
    if (outcome.kind === 'appended') return { kind: 'appended', entry };
  }
  throw new CountersignError('conflict', TEXTS.receiptKeptChanging);
}

/**
 * Whether the run's chain holds the entry of a turn's decision: what delivers a decision without
 * being able to sign (the probe) checks it first, since no decision is delivered without one.
 */
async function isDecisionOnChain(store: ReceiptChainStore, runId: string, turn: number): Promise<boolean> {
  const origin = decisionOrigin(turn);
  return (await readChain(store, runId)).some((entry) => originOf(entry) === origin);
}

/**
 * Whether a decision on record still lacks its receipt entry (its request failed between the claim
 * and the entry), so what may not sign (the probe, a retried pause) must not deliver or carry it
 * on: the approver's repeat appends it. A cancel's entry is its run's, and a claim without a
 * claim id was made before receipts were kept.
 *
 * @example
 * if (await lacksDecisionEntry(chain, claim)) throw new CountersignError('conflict', TEXTS.decisionWithoutReceipt);
 */
export async function lacksDecisionEntry(
  store: ReceiptChainStore,
  decision: Pick<DecisionRecord, 'runId' | 'turn' | 'decision' | 'claimId'>,
): Promise<boolean> {
  if (decision.decision === 'cancel' || decision.claimId === undefined) return false;
  return !(await isDecisionOnChain(store, decision.runId, decision.turn));
}

const decisionOrigin = (turn: number): string => `decision:${turn}`;

/**
 * Which record an entry stands for: a chain holds one entry per record. An approver who approves
 * a reopened turn (a new digest) approves something new. An edit is its turn's decision (the one
 * claim of the turn), so it stands where a decision would.
 */
function originOf(entry: EntryDraft | ChainEntry): string {
  switch (entry.kind) {
    case 'approval':
      return `approval:${entry.turn}:${entry.approver.userId}:${entry.digest}`;
    case 'decision':
    case 'edit':
      return decisionOrigin(entry.turn);
    case 'cancel':
      return 'cancel';
    case 'expiry':
      return 'expiry';
  }
}

/**
 * The run's chain, each entry read through its schema. An entry that does not parse was written by
 * no version of countersign: nothing is appended after it (a verifier names it), and the record
 * that wanted an entry fails closed, like a card that cannot be opened.
 */
async function readChain(store: ReceiptChainStore, runId: string): Promise<ChainEntry[]> {
  return (await store.readEntries(runId)).map((stored) => {
    const parsed = readableChainEntrySchema.safeParse(stored);
    if (!parsed.success) throw refusal('receipt chain entry');
    return parsed.data;
  });
}

interface LinkFields {
  schemaVersion: typeof CHAIN_ENTRY_SCHEMA_VERSION;
  sequence: number;
  previousHash: string | null;
  recordedAt: string;
}

async function completeEntry(
  dependencies: ChainDependencies,
  draft: EntryDraft,
  link: LinkFields,
): Promise<ChainEntry> {
  if (draft.kind === 'cancel' || draft.kind === 'expiry') return { ...link, ...draft };
  if (!dependencies.signer) {
    throw new CountersignError('internal', 'This function may not sign receipt entries.', { expose: false });
  }
  const signer = { keyId: await dependencies.signer.signingKeyId(), algorithm: RECEIPT_SIGNING_ALGORITHM };
  const content = { ...link, ...draft, signer } as Omit<SignedChainEntry, 'signature'>;
  const signature = await dependencies.signer.sign(signedMessageOf(content));
  return { ...content, signature: Buffer.from(signature).toString('base64') } as SignedChainEntry;
}
