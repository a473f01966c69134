import type { ApiRequest } from '../../lambdas/contract/api-client.js';
import type { ErrorBody } from '../../lambdas/contract/common-schemas.js';
import type { OperationId } from '../../lambdas/contract/routes.js';

/** The body an operation's typed method sends, for test data declared before the call. */
export type RequestBody<Id extends OperationId> = NonNullable<
  ApiRequest<Id> extends { readonly body?: infer Body } ? Body : never
>;

interface Answer {
  readonly status: number;
  readonly ok: boolean;
  readonly body: unknown;
  readonly text: string;
}

/** The body of an answer's success variants (of `Status` only, when given), as its operation's schema types it. */
type SuccessBodyOf<A, Status> = A extends { ok: true; status: infer Actual; body: infer Body }
  ? Actual extends Status
    ? NonNullable<Body>
    : never
  : never;

/**
 * The JSON body of a typed answer that succeeded, typed by its operation's response schema; with
 * `status`, the body of that success only (decideRun answers 200 or 202). A refusal, another
 * status or an answer without a JSON body fails the test, naming the status and the text.
 */
export function bodyOf<A extends Answer, Status extends number = number>(
  answer: A | undefined,
  status?: Status,
): SuccessBodyOf<A, Status> {
  if (!answer?.ok || answer.body === undefined || (status !== undefined && answer.status !== status)) {
    throw new Error(
      `Expected ${status ?? 'a success'} with a JSON body, got ${answer?.status}: ${answer?.text}`,
    );
  }
  return answer.body as SuccessBodyOf<A, Status>;
}

/** The error body of a refusal (`{error: {code, message, field?}}`); a success fails the test. */
export function refusalOf(answer: Answer | undefined): ErrorBody {
  if (!answer || answer.ok || answer.body === undefined) {
    throw new Error(`Expected a refusal with an error body, got ${answer?.status}: ${answer?.text}`);
  }
  return answer.body as ErrorBody;
}

/**
 * An inbox card that could be opened, not the flagged placeholder of one that could not; a
 * missing card or a placeholder fails the test.
 */
export function openedCard<Card extends { readonly runId: string }>(
  card: Card | undefined,
): Exclude<Card, { unopenable: true }> {
  if (!card || ('unopenable' in card && card.unopenable === true)) {
    throw new Error(`Expected an opened card, got ${JSON.stringify(card)}`);
  }
  return card as Exclude<Card, { unopenable: true }>;
}
