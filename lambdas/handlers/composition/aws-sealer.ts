import { createKmsKeyWrapping, EnvelopeSealer } from '../../adapters/envelope-sealer.js';
import type { RunDependencies } from '../../core/run-dependencies.js';
import { lambdaEnvironment } from '../config.js';

let sealer: RunDependencies['sealer'] | undefined;

/** Envelope sealing of run state under the construct's KMS key (the AWS Encryption SDK). */
export function awsSealer(): RunDependencies['sealer'] {
  sealer ??= new EnvelopeSealer({
    keyWrapping: createKmsKeyWrapping({ keyArn: lambdaEnvironment().COUNTERSIGN_SEALING_KEY_ARN }),
  });
  return sealer;
}
