import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { addPetStoreStacks } from '../lib/petstore-app';

const app = new App();
// PetStore-Staging and PetStore-Production, from lib/stage-config.ts.
addPetStoreStacks(app);
// cdk-nag AwsSolutions: an unacknowledged finding fails the synth. Every
// acknowledgment sits beside its cause, with its reason.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
