/**
 * The entry of the Encryption SDK's side module (`computeEncryptionSdkSideModule`): the part
 * of `@aws-crypto/client-node` the sealer calls, from the ES module builds of the packages
 * that make it up, so the side module leaves out what nothing calls (the branch keystore and
 * the hierarchical keyring with their DynamoDB and KMS clients, the RSA and MRK keyrings). The
 * handlers import it as `@aws-crypto/client-node`; unbundled (tests, `npm start`) that name is
 * the whole package, of which this is a part with the same names.
 *
 * @example
 * const { buildClient, CommitmentPolicy } = await import('@aws-crypto/client-node');
 */
import { buildDecrypt } from '@aws-crypto/decrypt-node';
import { buildEncrypt } from '@aws-crypto/encrypt-node';

export {
  getLocalCryptographicMaterialsCache,
  NodeCachingMaterialsManager,
} from '@aws-crypto/caching-materials-manager-node';
export { KmsKeyringNode } from '@aws-crypto/kms-keyring-node/build/module/src/kms_keyring_node.js';
export {
  AlgorithmSuiteIdentifier,
  CommitmentPolicy,
  KeyringNode,
} from '@aws-crypto/material-management-node';
export { RawAesKeyringNode, RawAesWrappingSuiteIdentifier } from '@aws-crypto/raw-aes-keyring-node';

/** `@aws-crypto/client-node`'s `buildClient`, as that package composes it. */
export function buildClient(
  options: Parameters<typeof buildEncrypt>[0] & Parameters<typeof buildDecrypt>[0],
) {
  return { ...buildEncrypt(options), ...buildDecrypt(options) };
}
