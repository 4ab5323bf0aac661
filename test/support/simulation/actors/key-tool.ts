import { issueKey, keyUsage, type PlanChoice, revokeKey, rotateKey, setPlan } from '../../../../admin/key-admin';
import { localTarget } from '../../../../admin/targets/local';
import type { PlanLimits } from '../../../../definitions/plans';
import type { TableName } from '../../../../definitions/tables';
import { limitsOf } from '../../../../functions/customers';
import type { SimulatedDynamoDB } from '../../simulated-dynamodb';

export interface Secret {
  label: string;
  keyId: string;
  secret: string;
}

/** The real key tool (npx petstore-keys) of the customer's administrator, on its own connection, answered at once. */
export class KeyTool {
  readonly secrets: Secret[] = [];
  private readonly target: ReturnType<typeof localTarget>;

  constructor(store: SimulatedDynamoDB, tableNames: Record<TableName, string>) {
    this.target = localTarget(store.client({ name: 'key-tool', mode: 'immediate' }), tableNames, { name: 'simulation' });
  }

  get newest(): Secret {
    return this.secrets.at(-1)!;
  }

  async issue(choice: PlanChoice, nowMs: number): Promise<{ customerId: string; limits: PlanLimits }> {
    const issued = await issueKey(this.target, { ...choice, owner: 'Simulated customer' }, nowMs);
    this.secrets.push({ label: 'secret 1', keyId: issued.key.keyId, secret: issued.secret });
    return { customerId: issued.key.keyId, limits: issued.key.limits };
  }

  /** The plan after the command (the same when the choice was the plan already: the key tool changes nothing). */
  async setPlan(choice: PlanChoice, nowMs: number): Promise<{ unchanged: boolean; limits: PlanLimits }> {
    const changed = await setPlan(this.target, this.newest.keyId, choice, nowMs);
    return { unchanged: changed.unchanged, limits: limitsOf(choice) };
  }

  async rotate(graceMs: number, nowMs: number): Promise<{ old: Secret; successor: Secret }> {
    const old = this.newest;
    const rotated = await rotateKey(this.target, old.keyId, graceMs, nowMs);
    const successor = { label: `secret ${this.secrets.length + 1}`, keyId: rotated.successor.keyId, secret: rotated.secret };
    this.secrets.push(successor);
    return { old, successor };
  }

  async revoke(secret: Secret, nowMs: number): Promise<void> {
    await revokeKey(this.target, secret.keyId, nowMs);
  }

  /** `usage`: the requests answered per UTC day, oldest first. */
  async usage(days: number, nowMs: number): Promise<{ day: string; requests: number }[]> {
    return (await keyUsage(this.target, this.secrets[0]!.keyId, days, nowMs)).days;
  }
}
