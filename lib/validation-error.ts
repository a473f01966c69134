import { ValidationError } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

// aws-cdk-lib brands the error name as a literal string; its constructs pass a tagged literal.
const ERROR_NAME = 'CountersignInvalidProp' as ConstructorParameters<typeof ValidationError>[0];

/**
 * The error for a prop that would deploy a broken runtime: CDK's own `ValidationError`
 * (`Errors.isValidationError` is true; the CLI shows the construct tree), with the construct
 * path at the start of the message so a log line alone says which instance is wrong.
 *
 * @example
 * throw invalidProp(this, `maxTurns ${maxTurns} is invalid; use a whole number between 1 and 200.`);
 */
export function invalidProp(scope: IConstruct, message: string): Error {
  return new ValidationError(ERROR_NAME, `${scope.node.path}: ${message}`, scope);
}
