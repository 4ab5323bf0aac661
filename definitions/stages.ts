/**
 * The deployed stages and their CloudFormation stacks. The CDK app deploys
 * them (lib/stage-config.ts adds everything else about a stage); the key tool
 * finds their outputs by these names.
 */
export const deployedStages = ['staging', 'production'] as const;
export type DeployedStage = (typeof deployedStages)[number];

export const stackNames: Record<DeployedStage, string> = { staging: 'PetStore-Staging', production: 'PetStore-Production' };
