import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deploymentCheckKey, isDeploymentCheck } from '../definitions/deployment-check';
import { pooledUsagePlan, sameUsagePlan, type UsagePlanSettings } from '../definitions/usage-plan-limits';

/**
 * The usage plans of the local gateway, by API key (metering key), as API
 * Gateway keeps them: "Throttling and quota limits apply to requests for
 * individual API keys" ("Usage plans and API keys for REST APIs in API
 * Gateway", https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-api-usage-plans.html),
 * and API Gateway applies the plan of the key the authorizer's (cached) answer
 * names as the plan is now, whatever that answer's context says. So the key
 * tool changes them (its local target, admin/targets/local.ts, as its AWS
 * target changes API Gateway's) and the gateway reads what it last set.
 *
 * One small file per metering key in a folder: the key tool's process writes
 * it (whole, by a rename, so it is never read half-written), the gateway's
 * reads it at every request: one open that finds nothing for a key without a
 * plan of its own, a read of a few bytes for an Enterprise customer's.
 */
export class LocalUsagePlans {
  constructor(readonly dir: string) {}

  /** The usage plan the key tool set for this metering key; undefined if none. */
  of(meteringKey: string): UsagePlanSettings | undefined {
    const file = this.fileOf(meteringKey);
    if (!file) return undefined;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    return (JSON.parse(text) as { settings: UsagePlanSettings }).settings;
  }

  /** Sets the usage plan of a metering key; a plan that limits nothing (pooledUsagePlan) is no file at all. */
  set(meteringKey: string, customerId: string, settings: UsagePlanSettings): void {
    const file = this.fileOf(meteringKey);
    if (!file) throw new Error('A metering key is 20 to 128 letters and digits');
    if (sameUsagePlan(settings, pooledUsagePlan)) {
      rmSync(file, { force: true });
      return;
    }
    mkdirSync(this.dir, { recursive: true });
    const written = `${file}.${process.pid}.tmp`;
    writeFileSync(written, `${JSON.stringify({ customerId, settings }, null, 2)}\n`);
    renameSync(written, file);
  }

  /** API Gateway's API key values are 20 to 128 alphanumeric characters: never a path. */
  private fileOf(meteringKey: string): string | undefined {
    return /^[A-Za-z0-9]{20,128}$/.test(meteringKey) ? join(this.dir, `${meteringKey}.json`) : undefined;
  }
}

/**
 * The usage plan the gateway applies to an API key: the one the key tool set
 * for it (an Enterprise customer's own: a throttle from its limits), the
 * deployment check's own (the stack's, for its key), or else a pooled key's,
 * which limits nothing (definitions/usage-plan-limits.ts): locally every other
 * customer's metering key stands in for the stack's pooled keys of its plan.
 */
export function usagePlansOfKeyTool(plans: LocalUsagePlans) {
  return (apiKey: string, context: Record<string, unknown>): UsagePlanSettings => {
    if (isDeploymentCheck(String(context.keyId ?? ''))) return deploymentCheckKey.usagePlan;
    return plans.of(apiKey) ?? pooledUsagePlan;
  };
}
