import serverlessExpress from '@vendia/serverless-express';
import { type BaselineDependencies, baselineDependenciesFromEnvironment } from '../common/dependencies';
import { createApp } from './app';

/** Baseline (b): the Express app behind @vendia/serverless-express, one Lambda function for both routes. */
export function createHandler(dependencies: BaselineDependencies) {
  return serverlessExpress({ app: createApp(dependencies) });
}

export const handler = createHandler(baselineDependenciesFromEnvironment());
