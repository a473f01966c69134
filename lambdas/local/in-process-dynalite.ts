import { EventEmitter } from 'node:events';
import type { RequestListener, Server } from 'node:http';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import type { HttpHandlerOptions, HttpRequest, HttpResponse, RequestHandler } from '@smithy/types';

/** dynalite ships no types: the options its factory takes and the store its database module makes. */
interface DynaliteOptions {
  path?: string;
  createTableMs?: number;
  deleteTableMs?: number;
  updateTableMs?: number;
}
interface DynaliteStore {
  db: { close(callback: (error?: Error | null) => void): void };
}
interface DynaliteDatabaseModule {
  create(options: DynaliteOptions): DynaliteStore;
}

const requireFromHere = createRequire(import.meta.url);

/**
 * dynalite's request handling driven in this process, with no socket: the AWS SDK's request
 * handler hands each request to the listener dynalite's factory registers on its HTTP server,
 * and that server never listens. A web page or another local user therefore has nothing to
 * connect to (issue #30: the loopback port answered CORS preflights from any origin and took
 * any signature).
 */
export interface InProcessDynalite {
  /** The SDK's `requestHandler`: each request answered by dynalite in this process. */
  readonly requestHandler: RequestHandler<HttpRequest, HttpResponse, HttpHandlerOptions> & {
    updateHttpClientConfig(): void;
    httpHandlerConfigs(): Record<string, never>;
  };
  /** Closes the store (its LevelDB files), so a later start in this process can open them again. */
  close(): Promise<void>;
}

/**
 * Creates dynalite's store and request listener without listening anywhere. The store is
 * taken from dynalite's own database module while its factory runs: the server's `close`
 * closes the store only after a listening socket closed, and there is none.
 *
 * @example
 * const store = createInProcessDynalite({ path: dataDirectory.dynaliteDirectory });
 * const client = new DynamoDBClient({ requestHandler: store.requestHandler, endpoint: IN_PROCESS_DYNALITE_ENDPOINT, ... });
 */
export function createInProcessDynalite(options: DynaliteOptions): InProcessDynalite {
  const dynalite = requireFromHere('dynalite') as (options: DynaliteOptions) => Server;
  const database = requireFromHere('dynalite/db/index.js') as DynaliteDatabaseModule;
  const create = database.create;
  let store: DynaliteStore | undefined;
  let server: Server;
  database.create = (storeOptions) => {
    store = create(storeOptions);
    return store;
  };
  try {
    server = dynalite(options);
  } finally {
    database.create = create;
  }
  const [listener] = server.listeners('request') as RequestListener[];
  if (listener === undefined || store === undefined) {
    throw new Error('dynalite did not create its request listener and store; check the installed version.');
  }
  const openedStore = store;
  return {
    requestHandler: {
      handle: (request) => answerInProcess(listener, request),
      updateHttpClientConfig() {},
      httpHandlerConfigs: () => ({}),
    },
    close: () =>
      new Promise<void>((resolve, reject) =>
        openedStore.db.close((error) => (error ? reject(error) : resolve())),
      ),
  };
}

/** The endpoint the SDK signs for: never resolved, no request leaves the process. */
export const IN_PROCESS_DYNALITE_ENDPOINT = 'http://dynalite.invalid';

/**
 * One request through dynalite's listener. dynalite reads `method`, `url` and `headers`, the
 * body's `data` and `end` events, and answers with `statusCode`, `setHeader` and `end`.
 */
function answerInProcess(
  listener: RequestListener,
  request: HttpRequest,
): Promise<{ response: HttpResponse }> {
  return new Promise((resolve, reject) => {
    const incoming = Object.assign(new EventEmitter(), {
      method: request.method,
      url: `${request.path}${queryString(request.query)}`,
      headers: Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]),
      ),
    });
    const headers: Record<string, string> = {};
    const outgoing = {
      statusCode: 200,
      contentType: undefined as string | undefined,
      setHeader(name: string, value: string | number) {
        headers[name.toLowerCase()] = String(value);
      },
      end(body?: string | Buffer) {
        const bytes = body === undefined ? Buffer.alloc(0) : Buffer.from(body);
        resolve({
          response: { statusCode: outgoing.statusCode, headers, body: Readable.from([bytes]) },
        });
      },
    };
    try {
      listener(incoming as never, outgoing as never);
      const body = bodyBytesOf(request.body);
      if (body.byteLength > 0) incoming.emit('data', body);
      incoming.emit('end');
    } catch (error) {
      reject(error);
    }
  });
}

/** The request body as bytes; a Uint8Array is viewed, not converted (the SDK's JSON body warns on string use). */
function bodyBytesOf(body: unknown): Buffer {
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.alloc(0);
}

function queryString(query: HttpRequest['query']): string {
  const parameters = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item !== null && item !== undefined) parameters.append(name, item);
    }
  }
  const text = parameters.toString();
  return text === '' ? '' : `?${text}`;
}
