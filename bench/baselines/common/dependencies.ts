import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * What a baseline handler needs from outside. The baselines are what a team
 * would write instead of our middy stack: the same contract for GET one pet
 * and POST a pet (rate limit with one conditional UpdateItem, zod validation,
 * ids reserved in blocks of 100), with @aws-sdk/lib-dynamodb and zod only, so
 * that both do the same DynamoDB work per request and a ratio measures code.
 */
export interface BaselineDependencies {
  db: DynamoDBDocumentClient;
  tableNames: { pets: string; rateLimits: string; apiKeys: string };
}

/** The table names the CDK stack would set, and the SDK's defaults (region, endpoint, credentials from the environment). */
export function baselineDependenciesFromEnvironment(): BaselineDependencies {
  return {
    db: DynamoDBDocumentClient.from(new DynamoDBClient({}), { marshallOptions: { removeUndefinedValues: true } }),
    tableNames: {
      pets: process.env.PETS_TABLE_NAME ?? '',
      rateLimits: process.env.RATE_LIMITS_TABLE_NAME ?? '',
      apiKeys: process.env.API_KEYS_TABLE_NAME ?? '',
    },
  };
}
