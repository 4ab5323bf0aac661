import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_GATEWAY_RETRY_BOUND_MS, UPDATE_USAGE_PLAN_INTERVAL_MS } from '../../admin/targets/aws';
import { projectRoot } from '../../lib/project-root';

/**
 * docs/operators.md states API Gateway's UpdateUsagePlan quota as the key tool
 * knows it (admin/targets/aws.ts), and says no more than AWS does about when a
 * usage-plan change applies: AWS documents no propagation time, and calls the
 * limits targets that "in some cases clients can exceed" (AWS::ApiGateway::UsagePlan).
 */
const operators = readFileSync(join(projectRoot, 'docs', 'operators.md'), 'utf8').replace(/\s+/g, ' ');
const seconds = UPDATE_USAGE_PLAN_INTERVAL_MS / 1000;

it("names UpdateUsagePlan's quota with the key tool's figure, its waiting line and what it costs a batch and release-metering", () => {
  expect(seconds).toBe(20);
  expect(operators).toContain(`**One \`UpdateUsagePlan\` every ${seconds} s per account, not raisable**`);
  expect(operators).toContain(`\`waiting ${seconds} s: API Gateway allows one UpdateUsagePlan every ${seconds} s per account\``);
  expect(operators).toContain(`a batch of Enterprise changes (a script of \`set-plan\`s, say) takes about ${seconds} s per change`);
  expect(operators).toContain(`\`release-metering\` takes about ${seconds} s per key it releases after the first`);
  expect(operators).toContain(`for at most **${API_GATEWAY_RETRY_BOUND_MS / 1000} s** per call`);
});

it('says what AWS says about usage-plan propagation, and nothing stronger', () => {
  expect(operators).toContain('it documents no time within which an `UpdateUsagePlan` takes effect at the gateway');
  expect(operators).toContain('"In some cases clients can exceed the targets that you set"');
  expect(operators).not.toMatch(/as that plan is now/);
});
