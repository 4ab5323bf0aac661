import { RemovalPolicy, type Environment } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';

/**
 * The deployment stages and everything that differs between them. One typed
 * place: the app, the stack and the infrastructure tests all read this table.
 * (The authorizer cache TTL is a property of the API, not of a stage: it lives
 * in definitions/routes.ts.)
 */
export type StageName = 'staging' | 'production';

export interface DataProtection {
  /** What CloudFormation does with tables and log groups when the stack or resource goes away. */
  removalPolicy: RemovalPolicy;
  /** DynamoDB continuous backups (restore to any second of the last 35 days). */
  pointInTimeRecovery: boolean;
  /** DynamoDB refuses DeleteTable while this is on, whoever asks. */
  deletionProtection: boolean;
}

export interface StageConfig {
  stage: StageName;
  stackName: string;
  description: string;
  dataProtection: DataProtection;
  /** Retention of the Lambda and API access log groups. */
  logRetention: RetentionDays;
  /** CloudFormation refuses `cdk destroy` of the stack while this is on. */
  terminationProtection: boolean;
}

export const stages: Record<StageName, StageConfig> = {
  staging: {
    stage: 'staging',
    stackName: 'PetStore-Staging',
    description: 'Pet Store API v1, staging: disposable, its data can be destroyed.',
    dataProtection: { removalPolicy: RemovalPolicy.DESTROY, pointInTimeRecovery: false, deletionProtection: false },
    logRetention: RetentionDays.TWO_WEEKS,
    terminationProtection: false,
  },
  production: {
    stage: 'production',
    stackName: 'PetStore-Production',
    description: 'Pet Store API v1, production.',
    dataProtection: { removalPolicy: RemovalPolicy.RETAIN, pointInTimeRecovery: true, deletionProtection: true },
    logRetention: RetentionDays.ONE_YEAR,
    terminationProtection: true,
  },
};

export const stageNames = Object.keys(stages) as StageName[];

/**
 * Where a stage deploys: `-c stagingAccount=… -c stagingRegion=…` (or
 * productionAccount / productionRegion), else the CLI's current credentials
 * (CDK_DEFAULT_ACCOUNT / CDK_DEFAULT_REGION). Never a lookup, so synth works
 * offline; with neither set the stack is environment-agnostic.
 */
export function stageEnvironment(
  stage: StageName,
  context: (key: string) => unknown,
  env: NodeJS.ProcessEnv = process.env,
): Environment {
  const fromContext = (key: string): string | undefined => {
    const value = context(`${stage}${key}`);
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  return {
    account: fromContext('Account') ?? env.CDK_DEFAULT_ACCOUNT,
    region: fromContext('Region') ?? env.CDK_DEFAULT_REGION,
  };
}
