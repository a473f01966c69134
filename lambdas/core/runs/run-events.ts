import { type CardView, viewWaitingCard } from '../approvals/card-reader.js';
import type { UnopenableCard } from '../approvals/unopenable-card.js';
import { CountersignError } from '../errors.js';
import { isAdmin, type UserProfile } from '../identity.js';
import type { Message } from '../model.js';
import type { StoredRun } from '../ports.js';
import type { CardReaderDependencies } from '../run-dependencies.js';
import { type RunRecord, TERMINAL_STATUSES } from '../run-record.js';
import { TEXTS } from '../texts.js';
import { buildRunStatusView, type RunStatusView } from './build-run-status-view.js';
import { unsealRunStateUnlessRefused } from './load-run.js';

/** How often a followed run is read again while it runs. */
export const RUN_EVENTS_POLL_INTERVAL_MS = 1_000;
/**
 * How long one stream follows a running run before it sends the state and ends; the client
 * opens a new stream to keep following. Below the deployed function's timeout.
 */
export const RUN_EVENTS_FOLLOW_MS = 60_000;

/** One model turn: its text and the tools it called (names and positions, no arguments). */
export interface TurnEvent {
  event: 'turn';
  data: { turn: number; text: string; toolCalls: Array<{ index: number; tool: string }> };
}

/**
 * One tool result: which tool and whether it errored. The result text stays out: it is page
 * content or a refusal meant for the model, and the owner reads the outcome in the next turn.
 */
export interface ToolResultEvent {
  event: 'tool_result';
  data: { turn: number; index: number; tool: string; isError: boolean };
}

/** The run waits for a decision: the part of its card view the stream shows, for this viewer. */
export interface AwaitingApprovalEvent {
  event: 'awaiting_approval';
  data: Pick<CardView, 'runId' | 'turn' | 'digest' | 'pausedAt' | 'expiresAt' | 'pendingTools' | 'approvals'>;
}

/**
 * The run's waiting card could not be opened: its placeholder, in place of `awaiting_approval`.
 * The card reader has ended the run, so the `state` event that follows says `failed`.
 */
export interface CardUnopenableEvent {
  event: 'card_unopenable';
  data: UnopenableCard;
}

/** The last event of every stream: where the run stands now. */
export interface StateEvent {
  event: 'state';
  data: { runId: string } & RunStatusView;
}

export type RunEvent = TurnEvent | ToolResultEvent | AwaitingApprovalEvent | CardUnopenableEvent | StateEvent;

export interface RunEventsOptions {
  /** @default RUN_EVENTS_POLL_INTERVAL_MS */
  readonly pollIntervalMs?: number;
  /** @default RUN_EVENTS_FOLLOW_MS */
  readonly followMs?: number;
  /** Aborted when the client goes away: the stream stops reading the run. */
  readonly signal?: AbortSignal;
}

/**
 * GET /runs/{id}/events: the run as a sequence of events for its owner or an admin. The
 * visibility check runs here, before any event, with the same 404 as GET /runs/{id}; the
 * returned sequence then replays the turns and tool results so far, follows the run while it
 * runs, and ends with `awaiting_approval` (when it waits) and a `state` event.
 *
 * @example
 * const events = await openRunEvents(dependencies, viewer, runId);
 * for await (const event of events) send(event.event, JSON.stringify(event.data));
 */
export async function openRunEvents(
  dependencies: CardReaderDependencies,
  viewer: UserProfile,
  runId: string,
  options: RunEventsOptions = {},
): Promise<AsyncGenerator<RunEvent, void, undefined>> {
  const run = await dependencies.runs.getRun(runId);
  if (!run || (run.record.owner !== viewer.userId && !isAdmin(viewer))) {
    throw new CountersignError('not-found', TEXTS.runNotFound);
  }
  return followRun(dependencies, viewer, run, options);
}

async function* followRun(
  dependencies: CardReaderDependencies,
  viewer: UserProfile,
  first: StoredRun,
  options: RunEventsOptions,
): AsyncGenerator<RunEvent, void, undefined> {
  const pollIntervalMs = options.pollIntervalMs ?? RUN_EVENTS_POLL_INTERVAL_MS;
  const deadline = dependencies.clock.now().getTime() + (options.followMs ?? RUN_EVENTS_FOLLOW_MS);
  const runId = first.record.runId;
  let run: StoredRun = first;
  let replayedMessages = 0;
  let seenVersion: string | undefined;
  for (;;) {
    let { record } = run;
    const version = `${record.status}:${record.turn}:${record.updatedAt}`;
    if (version !== seenVersion) {
      seenVersion = version;
      const transcript = (await unsealRunStateUnlessRefused(dependencies, run))?.transcript;
      if (transcript) {
        yield* transcriptEvents(transcript, replayedMessages);
        replayedMessages = transcript.length;
      }
    }
    if (record.status === 'waiting') {
      const awaiting = await awaitingApproval(dependencies, viewer, runId);
      if (awaiting) yield awaiting;
      // The reader ended the run of a card it refused: the stream ends on the state as it is now.
      if (awaiting?.event === 'card_unopenable')
        record = (await dependencies.runs.getRunRecord(runId)) ?? record;
    }
    const settled = record.status === 'waiting' || TERMINAL_STATUSES.has(record.status);
    if (settled || options.signal?.aborted || dependencies.clock.now().getTime() >= deadline) {
      yield stateEvent(record);
      return;
    }
    await sleep(pollIntervalMs, options.signal);
    run = (await dependencies.runs.getRun(runId)) ?? run;
  }
}

/** Turn and tool-result events for the messages from `from` on; turn k is the k-th model reply. */
function* transcriptEvents(transcript: readonly Message[], from: number): Generator<RunEvent> {
  let turn = 0;
  const callsById = new Map<string, { index: number; tool: string; turn: number }>();
  for (const [position, message] of transcript.entries()) {
    if (message.role === 'assistant') {
      turn += 1;
      const toolCalls = message.content
        .filter((block) => block.type === 'tool_call')
        .map((block, index) => {
          callsById.set(block.callId, { index, tool: block.name, turn });
          return { index, tool: block.name };
        });
      if (position < from) continue;
      const text = message.content
        .map((block) => (block.type === 'text' ? block.text : ''))
        .filter((part) => part.length > 0)
        .join('\n');
      yield { event: 'turn', data: { turn, text, toolCalls } };
      continue;
    }
    if (position < from) continue;
    for (const block of message.content) {
      if (block.type !== 'tool_result') continue;
      const call = callsById.get(block.callId);
      if (!call) continue;
      yield {
        event: 'tool_result',
        data: { turn: call.turn, index: call.index, tool: call.tool, isError: block.isError },
      };
    }
  }
}

async function awaitingApproval(
  dependencies: CardReaderDependencies,
  viewer: UserProfile,
  runId: string,
): Promise<AwaitingApprovalEvent | CardUnopenableEvent | undefined> {
  const reading = await viewWaitingCard(dependencies, viewer, runId);
  if (reading.kind === 'none') return undefined;
  if (reading.kind === 'unopenable') return { event: 'card_unopenable', data: reading.placeholder };
  const { turn, digest, pausedAt, expiresAt, pendingTools, approvals } = reading.view;
  return {
    event: 'awaiting_approval',
    data: { runId, turn, digest, pausedAt, expiresAt, pendingTools, ...(approvals ? { approvals } : {}) },
  };
}

function stateEvent(record: RunRecord): StateEvent {
  return { event: 'state', data: { runId: record.runId, ...buildRunStatusView(record) } };
}

function sleep(milliseconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, milliseconds);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
