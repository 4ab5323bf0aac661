import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { addPetStoreStacks } from '../../lib/petstore-app';
import { projectRoot } from '../../lib/project-root';

export type Json = Record<string, any>;

/**
 * The production stack's template from a real `cdk synth` with the project's
 * cdk.json context (assets not bundled), in a folder of its own under the
 * system's temp folder: the caller removes `outdir` when done.
 */
export function synthesizeProductionTemplate(prefix: string): { template: Json; outdir: string } {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const cdkContext = JSON.parse(fs.readFileSync(path.join(projectRoot, 'cdk.json'), 'utf8')).context as Record<string, unknown>;
  const app = new App({ outdir, context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
  return { template: Template.fromStack(addPetStoreStacks(app).production).toJSON() as Json, outdir };
}
