// Node 20 has no Promise.withResolvers (Node 22 does); aws-local-stepfunctions calls it.
interface WithResolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

const promiseConstructor = Promise as unknown as { withResolvers?: <T>() => WithResolvers<T> };
if (typeof promiseConstructor.withResolvers !== 'function') {
  promiseConstructor.withResolvers = <T>(): WithResolvers<T> => {
    let resolve!: WithResolvers<T>['resolve'];
    let reject!: WithResolvers<T>['reject'];
    const promise = new Promise<T>((resolvePromise, rejectPromise) => {
      resolve = resolvePromise;
      reject = rejectPromise;
    });
    return { promise, resolve, reject };
  };
}
