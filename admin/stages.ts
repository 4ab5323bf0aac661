export { type DeployedStage, deployedStages, stackNames } from '../definitions/stages';
