import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One answer of the server: its status, body and headers (a `Retry-After`, say). */
export interface ScriptedReply {
  readonly status: number;
  readonly body: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A chat completion proposing one call of `name` with `argumentsText` (raw, so a test can send malformed JSON). */
export function toolCallReply(name: string, argumentsText: string): string {
  return JSON.stringify({
    choices: [
      {
        finish_reason: 'tool_calls',
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call-1', type: 'function', function: { name, arguments: argumentsText } }],
        },
      },
    ],
  });
}

/** A chat completion ending the turn with `text`. */
export function finalAnswerReply(text: string): string {
  return JSON.stringify({
    choices: [{ finish_reason: 'stop', message: { role: 'assistant', content: text } }],
  });
}

/** A running scripted server, the requests it answered (by the script that answered them), and its stop. */
export interface ScriptedOpenAiServer {
  /** The API root to give the OpenAI-compatible adapter (`.../v1`). */
  readonly baseUrl: string;
  readonly requests: Array<{ script: string; body: { messages: Array<{ role: string; content: unknown }> } }>;
  close(): Promise<void>;
}

/**
 * A local server speaking the OpenAI-compatible chat completions protocol, as a provider would:
 * each request is answered by the script its first user message names, reply after reply; past
 * a script's end (or for no script) it answers `done`.
 *
 * @example
 * const provider = await startScriptedOpenAiServer({ 'provider error': [{ status: 403, body: '{}' }] });
 * await startTestRuntime({ openAiCompatible: { baseUrl: provider.baseUrl, apiKey: 'test-key' } });
 */
export async function startScriptedOpenAiServer(
  scripts: Readonly<Record<string, readonly ScriptedReply[]>>,
): Promise<ScriptedOpenAiServer> {
  const requests: ScriptedOpenAiServer['requests'] = [];
  const server = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk) => {
      raw += chunk;
    });
    request.on('end', () => {
      const body = JSON.parse(raw) as ScriptedOpenAiServer['requests'][number]['body'];
      const firstUser = body.messages.find((message) => message.role === 'user');
      const script =
        Object.keys(scripts).find((name) => String(firstUser?.content ?? '').includes(name)) ?? '';
      const turn = requests.filter((entry) => entry.script === script).length;
      requests.push({ script, body });
      const reply = scripts[script]?.[turn] ?? { status: 200, body: finalAnswerReply('done') };
      response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      response.end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
