import type { KMS } from '@aws-crypto/client-node';
import type { KMSClientConfig } from '@aws-sdk/client-kms';
import type { AwsCallCounter } from './aws-call-counter.js';
import { surfaceTransientFaults } from './aws-faults.js';
import type { KeyWrapping } from './sealing-keys.js';

export interface KmsKeyWrappingProps {
  /** The ARN of the KMS key that wraps sealing keys (a full key ARN: the keyring filters on it). */
  readonly keyArn: string;
  /**
   * Configuration of the KMS client (region, endpoint, credentials).
   * @default - the SDK's defaults, region taken from the key ARN
   */
  readonly clientConfig?: KMSClientConfig;
  /**
   * Counts the KMS calls through the client's middleware.
   * @default - calls are not counted
   */
  readonly callCounter?: AwsCallCounter;
}

/**
 * The deployed key wrapping: the Encryption SDK's KMS keyring over one customer managed key
 * (GenerateDataKey to wrap a sealing key, Decrypt with the key id to unwrap one). Its KMS
 * client comes with the SDK (the side module), one per region, counted when asked.
 *
 * @example
 * const sealer = new EnvelopeSealer({ keyWrapping: createKmsKeyWrapping({ keyArn }) });
 */
export function createKmsKeyWrapping(props: KmsKeyWrappingProps): KeyWrapping {
  return {
    kind: 'kms',
    createKeyring: ({ getClient, KMS: KmsClient, KmsKeyringNode }) => {
      const createClient = getClient(KmsClient, { ...props.clientConfig });
      const clients = new Map<string, KMS>();
      const clientProvider = (region: string): KMS | false => {
        const known = clients.get(region);
        if (known) return known;
        const created = createClient(region);
        if (!created) return false;
        // A throttled or failing KMS is `unavailable` (503, a retried step), never a 500.
        surfaceTransientFaults(created);
        props.callCounter?.attachTo(created);
        clients.set(region, created);
        return created;
      };
      return new KmsKeyringNode({ generatorKeyId: props.keyArn, clientProvider });
    },
  };
}
