import type { CfnResource } from 'aws-cdk-lib';

/**
 * Resources that CloudFormation must create (and delete) one after another:
 * each one added DependsOn the one added before it, so CloudFormation, which
 * otherwise works on independent resources in parallel, never runs two of
 * their API calls at once. The order of `add` is the order of the chain:
 * append new members at the end, so a deployment that adds some leaves every
 * existing link as it was.
 */
export class CreationChain {
  private last?: CfnResource;

  add(resource: CfnResource): void {
    if (this.last) resource.node.addDependency(this.last);
    this.last = resource;
  }
}
