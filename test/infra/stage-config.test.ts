/**
 * The stage table and the deployment's context: what `-c …` may turn on, and
 * the mistakes that must fail at synth rather than during a deployment.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { plans } from '../../definitions/plans';
import {
  authorizerReservation,
  canary,
  defaultWafRequestsPerKeyPerMinute,
  LAMBDA_UNRESERVED_MINIMUM,
  minimumWafRequestsPerIpPerMinute,
  requiredLambdaConcurrencyQuota,
  rollbackAlarmEvaluation,
  stageConfigFromContext,
  stageEnvironment,
  stageNames,
  stages,
  stageThrottleFor,
} from '../../lib/stage-config';
import { assumptions, awsLimits } from '../../scripts/capacity-model';

const contextOf = (values: Record<string, unknown>) => (key: string) => values[key];
const certificate = (region: string) => `arn:aws:acm:${region}:123456789012:certificate/0f3e4c1a-1111-4b5c-9d8e-7f6a5b4c3d2e`;

describe('the stage table', () => {
  test('production keeps its data; staging is disposable', () => {
    expect(stages.production.dataProtection).toEqual({
      removalPolicy: RemovalPolicy.RETAIN,
      pointInTimeRecovery: true,
      deletionProtection: true,
    });
    expect(stages.production.terminationProtection).toBe(true);
    expect(stages.staging.dataProtection).toEqual({
      removalPolicy: RemovalPolicy.DESTROY,
      pointInTimeRecovery: false,
      deletionProtection: false,
    });
    expect(stages.staging.terminationProtection).toBe(false);
  });

  test.each(stageNames)(
    '%s: custom domain and the per-IP WAF rule are off unless the context turns them on; the per-key rule is on',
    (stage) => {
      const config = stageConfigFromContext(stage, contextOf({}));
      expect(config.customDomain).toBeUndefined();
      expect(config.waf).toEqual({ requestsPerKeyPerMinute: defaultWafRequestsPerKeyPerMinute });
      expect(config).toEqual(stages[stage]);
    },
  );

  test("production's customer mix holds today's peak (SCALING.md: the Business keys at full rate)", () => {
    expect(stages.production.customers.business).toBeGreaterThanOrEqual(assumptions.businessKeysAtPeak);
  });

  test.each(stageNames)('%s: the stage throttle never refuses what the contract allows its customers, even all at once', (stage) => {
    const { throttle, customers } = stages[stage];
    let steadyPerSecond = 0;
    let allAtOnce = 0;
    for (const [plan, count] of Object.entries(customers)) {
      const limits = plans[plan as keyof typeof plans].limits;
      if (limits === 'custom') throw new Error('fixed plans only');
      steadyPerSecond += (count * limits.perMinute) / 60;
      // A client may send a minute's worth at the end of one UTC minute and another at the start of the next.
      allAtOnce += count * 2 * limits.perMinute;
    }
    expect(throttle).toEqual(stageThrottleFor(customers));
    expect(throttle.rateLimit).toBeGreaterThanOrEqual(2 * steadyPerSecond);
    expect(throttle.burstLimit).toBeGreaterThanOrEqual(allAtOnce);
  });

  test("both stages' throttles fit in the account's default 10,000 requests per second they may share; staging takes less than production", () => {
    expect(stages.production.throttle.rateLimit + stages.staging.throttle.rateLimit).toBeLessThanOrEqual(awsLimits.apiGatewayRps);
    expect(stages.staging.throttle.rateLimit).toBeLessThan(stages.production.throttle.rateLimit);
  });

  test("the authorizer's reserved concurrency serves a key flood at the stage throttle (20 ms a call) and leaves the region most of its pool", () => {
    for (const stage of stageNames) {
      const { throttle, authorizerReservedConcurrency } = stages[stage];
      expect(authorizerReservedConcurrency).toBeGreaterThanOrEqual((throttle.rateLimit * assumptions.durationsMs.authorizer) / 1000);
      expect(authorizerReservedConcurrency).toBeLessThanOrEqual(awsLimits.lambdaConcurrency / 10);
    }
  });

  test('an account with both stages needs a Lambda concurrency quota of 220 (both reservations plus the 100 Lambda keeps unreserved)', () => {
    expect(requiredLambdaConcurrencyQuota([stages.production])).toBe(
      stages.production.authorizerReservedConcurrency + LAMBDA_UNRESERVED_MINIMUM,
    );
    expect(requiredLambdaConcurrencyQuota(stageNames.map((stage) => stages[stage]))).toBe(220);
  });

  test("rollback alarms: 1-minute periods that fit in the canary's interval, with a minute to spare", () => {
    const { periodSeconds, evaluationPeriods } = rollbackAlarmEvaluation();
    expect(periodSeconds).toBe(60);
    expect(periodSeconds * evaluationPeriods).toBeLessThanOrEqual(canary.intervalMinutes * 60 - 60);
    expect(rollbackAlarmEvaluation(1).evaluationPeriods).toBe(1);
    expect(rollbackAlarmEvaluation(10).evaluationPeriods).toBe(9);
  });
});

describe('account quotas from the context, checked at synth', () => {
  test('a Lambda concurrency quota below the reservation plus 100 fails, naming the number needed', () => {
    expect(() => stageConfigFromContext('production', contextOf({ productionLambdaConcurrencyQuota: '150' }))).toThrow(
      /the account's Lambda concurrency quota must be at least 200 .*productionLambdaConcurrencyQuota says 150/,
    );
    expect(() => stageConfigFromContext('production', contextOf({ productionLambdaConcurrencyQuota: '200' }))).not.toThrow();
    expect(() => stageConfigFromContext('staging', contextOf({ stagingLambdaConcurrencyQuota: 'lots' }))).toThrow(/whole number/);
  });

  test('the authorizer reserves concurrency only where the quota is declared (and so checked)', () => {
    for (const stage of stageNames) {
      expect(authorizerReservation(stageConfigFromContext(stage, contextOf({})))).toBeUndefined();
      const declared = stageConfigFromContext(stage, contextOf({ [`${stage}LambdaConcurrencyQuota`]: '1000' }));
      expect(authorizerReservation(declared)).toBe(stages[stage].authorizerReservedConcurrency);
    }
  });

  test("a stage throttle above the account's API Gateway quota fails (13 Regions default to 2,500 requests per second)", () => {
    expect(() => stageConfigFromContext('production', contextOf({ productionApiGatewayRpsQuota: '2500' }))).toThrow(
      /stage throttle \(4040 requests per second, derived from its customer mix\) is above the account's API Gateway throttle quota of 2500/,
    );
    expect(() => stageConfigFromContext('production', contextOf({ productionApiGatewayRpsQuota: '10000' }))).not.toThrow();
  });
});

describe('stageConfigFromContext', () => {
  test('a custom domain from <stage>DomainName and <stage>CertificateArn', () => {
    const config = stageConfigFromContext(
      'production',
      contextOf({ productionDomainName: 'api.example.com', productionCertificateArn: certificate('eu-west-1') }),
      'eu-west-1',
    );
    expect(config.customDomain).toEqual({ domainName: 'api.example.com', certificateArn: certificate('eu-west-1') });
    // The other stage is untouched.
    expect(stageConfigFromContext('staging', contextOf({ productionDomainName: 'api.example.com' })).customDomain).toBeUndefined();
  });

  test('a domain without its certificate, or the reverse, fails', () => {
    expect(() => stageConfigFromContext('production', contextOf({ productionDomainName: 'api.example.com' }))).toThrow(/needs both/);
    expect(() => stageConfigFromContext('production', contextOf({ productionCertificateArn: certificate('eu-west-1') }))).toThrow(
      /needs both/,
    );
  });

  test('a malformed domain or certificate ARN fails', () => {
    expect(() =>
      stageConfigFromContext(
        'staging',
        contextOf({ stagingDomainName: 'https://api.example.com/', stagingCertificateArn: certificate('eu-west-1') }),
      ),
    ).toThrow(/host name/);
    expect(() =>
      stageConfigFromContext(
        'staging',
        contextOf({ stagingDomainName: 'api.example.com', stagingCertificateArn: 'arn:aws:iam::123456789012:role/x' }),
      ),
    ).toThrow(/ACM certificate ARN/);
  });

  test("a certificate of another region than the stage's fails (a regional domain needs its own region's)", () => {
    const context = contextOf({ stagingDomainName: 'api.example.com', stagingCertificateArn: certificate('us-east-1') });
    expect(() => stageConfigFromContext('staging', context, 'eu-west-1')).toThrow(/us-east-1.*eu-west-1/);
    // Region unknown at synth (environment-agnostic stack): CloudFormation will check.
    expect(stageConfigFromContext('staging', context).customDomain?.domainName).toBe('api.example.com');
  });

  test('WAF from <stage>WafRateLimit, requests per client IP per minute, with a per-key rule (<stage>WafKeyRateLimit, or its default)', () => {
    const perKey = defaultWafRequestsPerKeyPerMinute;
    expect(stageConfigFromContext('staging', contextOf({ stagingWafRateLimit: '5000' })).waf).toEqual({
      requestsPerIpPerMinute: 5000,
      requestsPerKeyPerMinute: perKey,
    });
    expect(stageConfigFromContext('staging', contextOf({ stagingWafRateLimit: 5000, stagingWafKeyRateLimit: '9000' })).waf).toEqual({
      requestsPerIpPerMinute: 5000,
      requestsPerKeyPerMinute: 9000,
    });
    expect(stageConfigFromContext('staging', contextOf({ stagingWafKeyRateLimit: '9000' })).waf).toEqual({ requestsPerKeyPerMinute: 9000 });
    expect(() =>
      stageConfigFromContext(
        'staging',
        contextOf({ stagingWafRateLimit: 5000, stagingWafKeyRateLimit: String(minimumWafRequestsPerIpPerMinute - 1) }),
      ),
    ).toThrow(/WafKeyRateLimit must be/);
  });

  test('a WAF limit that could refuse what the contract allows one key fails', () => {
    const largestPerMinute = Math.max(...Object.values(plans).map(({ limits }) => (limits === 'custom' ? 0 : limits.perMinute)));
    expect(minimumWafRequestsPerIpPerMinute).toBe(2 * largestPerMinute);
    expect(() =>
      stageConfigFromContext('staging', contextOf({ stagingWafRateLimit: String(minimumWafRequestsPerIpPerMinute - 1) })),
    ).toThrow(/WafRateLimit must be/);
    expect(
      stageConfigFromContext('staging', contextOf({ stagingWafRateLimit: String(minimumWafRequestsPerIpPerMinute) })).waf
        .requestsPerIpPerMinute,
    ).toBe(minimumWafRequestsPerIpPerMinute);
    for (const bad of ['abc', '1e4', '-5', '3000.5']) {
      expect(() => stageConfigFromContext('staging', contextOf({ stagingWafRateLimit: bad }))).toThrow(/WafRateLimit/);
    }
  });
});

describe('stageEnvironment', () => {
  test('context first, then the CLI credentials, never a lookup', () => {
    const env = { CDK_DEFAULT_ACCOUNT: '111111111111', CDK_DEFAULT_REGION: 'us-east-1' };
    expect(stageEnvironment('staging', contextOf({}), env)).toEqual({ account: '111111111111', region: 'us-east-1' });
    expect(stageEnvironment('staging', contextOf({ stagingAccount: '222222222222', stagingRegion: 'eu-west-1' }), env)).toEqual({
      account: '222222222222',
      region: 'eu-west-1',
    });
    expect(stageEnvironment('production', contextOf({ stagingRegion: 'eu-west-1' }), {})).toEqual({
      account: undefined,
      region: undefined,
    });
  });
});
