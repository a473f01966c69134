/** How long `settle` waits for in-flight invocations (a stream may not notice its end at once). */
const SETTLE_MILLISECONDS = 5_000;

/**
 * The handler invocations still running in the embedded runtime, so stopping it can let them
 * finish before the stores close under them.
 *
 * @example
 * const inFlight = new InFlightInvocations();
 * const api = inFlight.track(createApiHandlers(dependencies));
 * await inFlight.settle(); // on stop
 */
export class InFlightInvocations {
  private readonly running = new Set<Promise<unknown>>();

  /** The same handlers, each invocation counted while it runs. */
  public track<Handlers extends Record<string, (...args: never[]) => Promise<unknown>>>(
    handlers: Handlers,
  ): Handlers {
    const tracked: Record<string, (...args: never[]) => Promise<unknown>> = {};
    for (const [name, handler] of Object.entries(handlers)) {
      tracked[name] = (...args) => {
        const invocation = handler(...args);
        this.running.add(invocation);
        const forget = () => this.running.delete(invocation);
        invocation.then(forget, forget);
        return invocation;
      };
    }
    return tracked as Handlers;
  }

  /** Resolves when every tracked invocation has settled, or after a bounded wait. */
  public async settle(): Promise<void> {
    await Promise.race([Promise.allSettled([...this.running]), delay(SETTLE_MILLISECONDS)]);
  }
}

function delay(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds).unref());
}
