import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/** What the server does with the next requests (the last behaviour given stays). */
export type Misbehaviour =
  | { kind: 'answer'; status?: number; body: string; headers?: Record<string, string> }
  | { kind: 'redirect'; status: 301 | 302 | 303 | 307 | 308; location: string }
  | { kind: 'trickle'; intervalMilliseconds: number; bytes: number }
  | { kind: 'bloat'; bytes: number; encoding: 'identity' | 'gzip' | 'br'; declareLength: boolean }
  | { kind: 'hang' };

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

export interface MisbehavingServer {
  readonly url: string;
  readonly origin: string;
  /** Every request that reached this server, body included. */
  readonly received: ReceivedRequest[];
  /** What it does next; `byPath` for a path of its own (a redirect's target). */
  behave(behaviour: Misbehaviour, path?: string): void;
  stop(): Promise<void>;
}

/** Compressed bombs, built once per size and encoding: `bytes` of 'a' once decoded. */
const bombs = new Map<string, Buffer>();

function bombOf(bytes: number, encoding: 'gzip' | 'br'): Buffer {
  const key = `${encoding}:${bytes}`;
  let bomb = bombs.get(key);
  if (bomb === undefined) {
    const plain = Buffer.alloc(bytes, 0x61);
    bomb =
      encoding === 'gzip'
        ? gzipSync(plain, { level: 9 })
        : brotliCompressSync(plain, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } });
    bombs.set(key, bomb);
  }
  return bomb;
}

/**
 * A local HTTP server on 127.0.0.1 that misbehaves as a hostile or broken upstream would:
 * redirects elsewhere, trickles its body, answers with a bloated (or compressed bomb) body, or
 * never answers. The outbound policy's suite and the adapters' tests run against it.
 *
 * @example
 * const server = await startMisbehavingServer();
 * server.behave({ kind: 'bloat', bytes: 100 * 1024 * 1024, encoding: 'gzip', declareLength: true });
 */
export async function startMisbehavingServer(): Promise<MisbehavingServer> {
  const received: ReceivedRequest[] = [];
  const behaviours = new Map<string, Misbehaviour>();
  let fallback: Misbehaviour = { kind: 'answer', body: '{}' };
  const timers = new Set<ReturnType<typeof setInterval>>();
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = request.url ?? '/';
    received.push({
      method: request.method ?? 'GET',
      url,
      headers: request.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    });
    behaveOn(behaviours.get(url.split('?')[0] ?? url) ?? fallback, response, timers);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}/`,
    origin,
    received,
    behave(behaviour, path) {
      // A bomb is built now, so what a test measures while the call runs is the client's memory.
      if (behaviour.kind === 'bloat' && behaviour.encoding !== 'identity')
        bombOf(behaviour.bytes, behaviour.encoding);
      if (path === undefined) fallback = behaviour;
      else behaviours.set(path, behaviour);
    },
    stop: async () => {
      for (const timer of timers) clearInterval(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function behaveOn(
  behaviour: Misbehaviour,
  response: ServerResponse,
  timers: Set<ReturnType<typeof setInterval>>,
): void {
  switch (behaviour.kind) {
    case 'answer':
      response.writeHead(behaviour.status ?? 200, {
        'content-type': 'application/json',
        ...behaviour.headers,
      });
      response.end(behaviour.body);
      return;
    case 'redirect':
      response.writeHead(behaviour.status, { location: behaviour.location }).end();
      return;
    case 'trickle': {
      response.writeHead(200, { 'content-type': 'application/json' });
      let sent = 0;
      const timer = setInterval(() => {
        if (response.destroyed || sent >= behaviour.bytes) {
          clearInterval(timer);
          timers.delete(timer);
          response.end();
          return;
        }
        sent += 1;
        response.write(' ');
      }, behaviour.intervalMilliseconds);
      timers.add(timer);
      return;
    }
    case 'bloat': {
      const body =
        behaviour.encoding === 'identity'
          ? Buffer.alloc(behaviour.bytes, 0x61)
          : bombOf(behaviour.bytes, behaviour.encoding);
      response.writeHead(200, {
        'content-type': 'application/json',
        ...(behaviour.encoding === 'identity' ? {} : { 'content-encoding': behaviour.encoding }),
        ...(behaviour.declareLength ? { 'content-length': String(body.byteLength) } : {}),
      });
      response.end(body);
      return;
    }
    case 'hang':
      return;
  }
}
