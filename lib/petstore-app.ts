import type { App } from 'aws-cdk-lib';
import { PetStoreStack } from './petstore-stack';
import { type StageName, stageConfigFromContext, stageEnvironment, stageNames } from './stage-config';

/** Adds one stack per stage of stage-config to the app (used by bin/ and the tests). */
export function addPetStoreStacks(app: App): Record<StageName, PetStoreStack> {
  const context = (key: string): unknown => app.node.tryGetContext(key);
  const stacks: Partial<Record<StageName, PetStoreStack>> = {};
  for (const stage of stageNames) {
    const env = stageEnvironment(stage, context);
    const config = stageConfigFromContext(stage, context, env.region);
    stacks[stage] = new PetStoreStack(app, config.stackName, { config, env });
  }
  return stacks as Record<StageName, PetStoreStack>;
}
