import type { App } from 'aws-cdk-lib';
import { PetStoreStack } from './petstore-stack';
import { stageEnvironment, stageNames, stages, type StageName } from './stage-config';

/** Adds one stack per stage of stage-config to the app (used by bin/ and the tests). */
export function addPetStoreStacks(app: App): Record<StageName, PetStoreStack> {
  const stacks: Partial<Record<StageName, PetStoreStack>> = {};
  for (const stage of stageNames) {
    const config = stages[stage];
    stacks[stage] = new PetStoreStack(app, config.stackName, {
      config,
      env: stageEnvironment(stage, (key) => app.node.tryGetContext(key)),
    });
  }
  return stacks as Record<StageName, PetStoreStack>;
}
