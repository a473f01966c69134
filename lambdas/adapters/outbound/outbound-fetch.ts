/**
 * The one policy for every HTTP call countersign makes to a server it does not run: model
 * providers, skill sources, MCP servers, and the notification channels to come (Slack, SES).
 * An adapter states its policy and calls through here, so each call is bounded alike:
 * - **redirects**: refused unless to the same origin (scheme, host and port), at most
 *   {@link MAX_SAME_ORIGIN_REDIRECTS}; a policy may refuse them all. A prompt, a key or a secret
 *   is never re-sent to another origin.
 * - **size**: the response body is counted while it streams, after decompression (fetch
 *   decodes gzip, deflate and br as it reads), and the call ends at `maxResponseBytes`: a
 *   100 KB gzip bomb costs what the limit allows, not the 100 MiB it expands to.
 * - **time**: one `AbortSignal` from the caller covers connecting, waiting, the body and, in
 *   the adapters, every retry; it is the caller's deadline, so when it fires nothing more goes
 *   out.
 * - **failures** are {@link OutboundCallRefused} with a reason and a name set here (logs show
 *   the name; bundles rename classes), never a provider's text.
 *
 * Built on Node's own fetch (undici), loaded on the first call: nothing here costs a cold start.
 */

/** How many same-origin redirects one call follows before it is refused. */
export const MAX_SAME_ORIGIN_REDIRECTS = 3;

export interface OutboundPolicy {
  /** `same-origin`: follow a redirect within the origin (at most 3); `none`: every 3xx is refused. */
  readonly redirects: 'same-origin' | 'none';
  /** The largest response body, in bytes after decompression, counted while it streams. */
  readonly maxResponseBytes: number;
  /**
   * Checked for the first URL and every redirect target before a request goes out (a host
   * allow-list). @default - every URL
   */
  readonly allowsUrl?: (url: URL) => boolean;
}

export type OutboundRefusalReason =
  | 'redirect-refused'
  | 'url-refused'
  | 'too-large'
  | 'timed-out'
  | 'cancelled'
  | 'unreachable';

const NAME_BY_REASON: Record<OutboundRefusalReason, string> = {
  'redirect-refused': 'OutboundRedirectRefused',
  'url-refused': 'OutboundUrlRefused',
  'too-large': 'OutboundResponseTooLarge',
  'timed-out': 'OutboundTimeout',
  cancelled: 'OutboundCancelled',
  unreachable: 'OutboundUnreachable',
};

/**
 * An outbound call that produced no answer within its policy. Its `name` says which rule
 * stopped it (`OutboundRedirectRefused`, `OutboundResponseTooLarge`, `OutboundTimeout`, ...).
 */
export class OutboundCallRefused extends Error {
  public readonly reason: OutboundRefusalReason;
  /** The origin a refused redirect or URL pointed at (never a path or query), for the caller's message. */
  public readonly target?: string;

  public constructor(reason: OutboundRefusalReason, target?: URL) {
    super(`The outbound call was stopped: ${reason}.`);
    this.reason = reason;
    this.name = NAME_BY_REASON[reason];
    if (target !== undefined) this.target = target.origin;
  }
}

/** True when `error` is an outbound refusal (with the given reason). */
export function isOutboundRefusal(
  error: unknown,
  reason?: OutboundRefusalReason,
): error is OutboundCallRefused {
  return error instanceof OutboundCallRefused && (reason === undefined || error.reason === reason);
}

/**
 * A `fetch` bound by `policy`, for code that takes a fetch function (the MCP SDK's transport):
 * redirects and URLs are checked before each request goes out, the body it returns errors
 * with `OutboundResponseTooLarge` past the limit, and a failure is an {@link OutboundCallRefused}.
 *
 * @example
 * const transport = new StreamableHTTPClientTransport(url, {
 *   fetch: createOutboundFetch({ redirects: 'none', maxResponseBytes: 4 * 1024 * 1024 }),
 * });
 */
export function createOutboundFetch(
  policy: OutboundPolicy,
  options: { readonly fetch?: typeof fetch } = {},
): (input: string | URL, init?: RequestInit) => Promise<Response> {
  return async (input, init = {}) => {
    const fetchImplementation = options.fetch ?? globalThis.fetch;
    let url = new URL(String(input));
    let request: RequestInit = { ...init, redirect: 'manual' };
    for (let redirects = 0; ; redirects += 1) {
      if (policy.allowsUrl && !policy.allowsUrl(url)) throw new OutboundCallRefused('url-refused', url);
      let response: Response;
      try {
        response = await fetchImplementation(url, request);
      } catch (error) {
        throw refusalOf(error, init.signal);
      }
      if (response.status < 300 || response.status > 399) return capResponse(response, policy, init.signal);
      await response.body?.cancel().catch(() => undefined);
      const location = response.headers.get('location');
      const next = location === null ? undefined : safeUrl(location, url);
      const allowed =
        policy.redirects === 'same-origin' &&
        next !== undefined &&
        next.origin === url.origin &&
        redirects < MAX_SAME_ORIGIN_REDIRECTS;
      if (!allowed || next === undefined) throw new OutboundCallRefused('redirect-refused', next);
      const followed = followRedirect(response.status, request);
      if (followed === undefined) throw new OutboundCallRefused('redirect-refused', next);
      url = next;
      request = followed;
    }
  };
}

/** What one outbound call came back with: the whole body, read within the policy. */
export type OutboundAnswer =
  | { kind: 'answered'; status: number; headers: Headers; body: Uint8Array }
  | { kind: 'refused'; reason: OutboundRefusalReason; target?: string };

/**
 * One request answered whole, as an outcome: the status, headers and body (bounded), or the
 * reason the policy stopped it. The adapters' way in; channels to come call it the same way.
 *
 * @example
 * const answer = await callOutbound(
 *   { url: 'https://api.github.com/repos/acme/skills', signal: AbortSignal.timeout(10_000) },
 *   { redirects: 'same-origin', maxResponseBytes: 8 * 1024 * 1024 },
 * );
 * if (answer.kind === 'answered' && answer.status === 200) JSON.parse(new TextDecoder().decode(answer.body));
 */
export async function callOutbound(
  request: {
    readonly url: string | URL;
    readonly method?: string;
    readonly headers?: Record<string, string>;
    readonly body?: string;
    /** The caller's deadline (and cancellation), for the request and its body alike. */
    readonly signal: AbortSignal;
  },
  policy: OutboundPolicy,
  options: { readonly fetch?: typeof fetch } = {},
): Promise<OutboundAnswer> {
  try {
    const response = await createOutboundFetch(policy, options)(request.url, {
      method: request.method ?? 'GET',
      ...(request.headers ? { headers: request.headers } : {}),
      ...(request.body === undefined ? {} : { body: request.body }),
      signal: request.signal,
    });
    const body = await readBody(response, request.signal);
    return { kind: 'answered', status: response.status, headers: response.headers, body };
  } catch (error) {
    if (isOutboundRefusal(error)) {
      return { kind: 'refused', reason: error.reason, ...(error.target ? { target: error.target } : {}) };
    }
    throw error;
  }
}

async function readBody(response: Response, signal: AbortSignal): Promise<Uint8Array> {
  if (response.body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      length += value.byteLength;
    }
  } catch (error) {
    throw refusalOf(error, signal);
  }
  const body = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/**
 * The response with its body counted as it is read: past the limit the body errors with
 * `too-large` and the connection is cancelled. A declared length past the limit is refused
 * before anything is read.
 */
function capResponse(
  response: Response,
  policy: OutboundPolicy,
  signal: AbortSignal | null | undefined,
): Response {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > policy.maxResponseBytes) {
    void response.body?.cancel().catch(() => undefined);
    throw new OutboundCallRefused('too-large');
  }
  if (response.body === null) return response;
  const source = response.body.getReader();
  let received = 0;
  const capped = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof source.read>>;
      try {
        chunk = await source.read();
      } catch (error) {
        controller.error(refusalOf(error, signal));
        return;
      }
      if (chunk.done) {
        controller.close();
        return;
      }
      received += chunk.value.byteLength;
      if (received > policy.maxResponseBytes) {
        controller.error(new OutboundCallRefused('too-large'));
        await source.cancel().catch(() => undefined);
        return;
      }
      controller.enqueue(chunk.value);
    },
    cancel: (reason) => source.cancel(reason),
  });
  return new Response(capped, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * The request a redirect leads to (fetch's rules): 307 and 308 repeat the method and body; 301
 * and 302 turn a POST into a GET, and 303 anything but HEAD, without a body. A body that
 * cannot be sent twice (a stream) makes the redirect refused.
 */
function followRedirect(status: number, request: RequestInit): RequestInit | undefined {
  const method = (request.method ?? 'GET').toUpperCase();
  const becomesGet =
    (status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST');
  if (becomesGet) {
    const { body: _body, ...rest } = request;
    return { ...rest, method: 'GET' };
  }
  if (status !== 301 && status !== 302 && status !== 307 && status !== 308) return undefined;
  const body = request.body;
  const repeatable =
    body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
  return repeatable ? request : undefined;
}

function safeUrl(location: string, base: URL): URL | undefined {
  try {
    return new URL(location, base);
  } catch {
    return undefined;
  }
}

/** Why a fetch or a body read failed: the caller's deadline, the caller cancelling, or the network. */
function refusalOf(error: unknown, signal: AbortSignal | null | undefined): OutboundCallRefused {
  if (isOutboundRefusal(error)) return error;
  if (signal?.aborted) {
    const reason: unknown = signal.reason;
    const timedOut = reason instanceof Error && reason.name === 'TimeoutError';
    return new OutboundCallRefused(timedOut ? 'timed-out' : 'cancelled');
  }
  return new OutboundCallRefused('unreachable');
}
