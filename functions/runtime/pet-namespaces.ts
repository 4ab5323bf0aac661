import { deploymentCheckKey, isDeploymentCheck } from '../../definitions/deployment-check';

/**
 * What serves one namespace of pets, built once per container for each: the
 * customers' pets and the deployment check's (definitions/deployment-check.ts),
 * and the one a caller's key is served from. Choosing costs nothing per request.
 */
export function perPetNamespace<T>(build: (namespace: string | undefined) => T): (keyId: string | undefined) => T {
  const customers = build(undefined);
  const check = build(deploymentCheckKey.petNamespace);
  return (keyId) => (isDeploymentCheck(keyId) ? check : customers);
}
