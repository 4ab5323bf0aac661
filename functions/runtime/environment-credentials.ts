import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles (an
 * esbuild alias in definitions/lambda-function.ts): the SDK clients resolve credentials
 * from the environment only.
 *
 * Lambda puts the execution role's credentials in AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN ("Defined runtime environment
 * variables", https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html),
 * which is where the SDK's default chain finds them first anyway. The rest of
 * that chain (SSO, profiles, web identity, STS and SSO clients, instance
 * metadata) is never used in Lambda but made up about 135 KiB of every bundle,
 * parsed and compiled at each cold start. Outside the bundles (tests, the
 * local gateway, the key tool) the SDK keeps its whole default chain.
 */
export function defaultProvider(init: Parameters<typeof fromEnv>[0] = {}): ReturnType<typeof fromEnv> {
  return fromEnv(init);
}
