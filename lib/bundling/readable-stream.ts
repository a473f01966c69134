/**
 * Node's own stream module, bundled in place of the npm `readable-stream` package (the alias
 * is set in `computeHandlerBundleSettings`, lib/functions.ts). readable-stream 3 is Node's stream
 * code republished for old runtimes, with one difference that matters here: its `pipeline`
 * lets the callback be left out (it then rethrows an error), where Node's requires it. The AWS
 * Encryption SDK leaves it out when it encrypts, so this `pipeline` supplies that same callback.
 *
 * @example
 * // esbuild --alias:readable-stream=lib/bundling/readable-stream.ts
 * import { pipeline, Transform } from 'readable-stream';
 */
import {
  Duplex,
  finished,
  pipeline as nodePipeline,
  PassThrough,
  Readable,
  Stream,
  Transform,
  Writable,
} from 'node:stream';

export { Duplex, finished, PassThrough, Readable, Stream, Transform, Writable };

type PipelineArguments = Parameters<typeof nodePipeline>;

/** `stream.pipeline`, with readable-stream's callback when none is given: rethrow an error. */
export function pipeline(...streams: unknown[]): NodeJS.WritableStream {
  const callback = typeof streams.at(-1) === 'function' ? [] : [rethrow];
  return (nodePipeline as (...args: unknown[]) => NodeJS.WritableStream)(
    ...(streams as PipelineArguments),
    ...callback,
  );
}

function rethrow(error?: Error | null): void {
  if (error) throw error;
}
