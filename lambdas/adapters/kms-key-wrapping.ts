import type { KMS } from '@aws-crypto/client-node';
import {
  DecryptCommand,
  EncryptCommand,
  GenerateDataKeyCommand,
  KMSClient,
  type KMSClientConfig,
} from '@aws-sdk/client-kms';
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
 * (GenerateDataKey to wrap a sealing key, Decrypt with the key id to unwrap one), through a KMS
 * client of this bundle, one per region, counted when asked. The keyring's own default client
 * is not shipped (lib/bundling/no-default-kms-client.ts): the bundle's shares the SDK core the
 * handler has loaded already, where the side module's copy cost the first seal or unseal about
 * half of its CPU (`npm run bench`, first request).
 *
 * @example
 * const sealer = new EnvelopeSealer({ keyWrapping: createKmsKeyWrapping({ keyArn }) });
 */
export function createKmsKeyWrapping(props: KmsKeyWrappingProps): KeyWrapping {
  return {
    kind: 'kms',
    createKeyring: ({ KmsKeyringNode }) => {
      const clients = new Map<string, KMS>();
      const clientProvider = (region: string): KMS => {
        const known = clients.get(region);
        if (known) return known;
        const created = createKeyringClient(
          new KMSClient({ ...props.clientConfig, region }),
          props.callCounter,
        );
        clients.set(region, created);
        return created;
      };
      return new KmsKeyringNode({ generatorKeyId: props.keyArn, clientProvider });
    },
  };
}

/**
 * A KMS client as the keyring calls it: the three operations of the SDK's aggregated `KMS`
 * client that its helpers use (`@aws-crypto/kms-keyring`, helpers), each one command sent.
 */
function createKeyringClient(client: KMSClient, callCounter: AwsCallCounter | undefined): KMS {
  // A throttled or failing KMS is `unavailable` (503, a retried step), never a 500.
  surfaceTransientFaults(client);
  callCounter?.attachTo(client);
  const operations = {
    generateDataKey: (input: GenerateDataKeyCommand['input']) =>
      client.send(new GenerateDataKeyCommand(input)),
    encrypt: (input: EncryptCommand['input']) => client.send(new EncryptCommand(input)),
    decrypt: (input: DecryptCommand['input']) => client.send(new DecryptCommand(input)),
  };
  // The keyring's type names the aggregated client; it calls these three and nothing else.
  return operations as unknown as KMS;
}
