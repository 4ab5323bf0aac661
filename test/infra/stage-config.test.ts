/**
 * The stage table and the deployment's context: what `-c …` may turn on, and
 * the mistakes that must fail at synth rather than during a deployment.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { plans } from '../../definitions/plans';
import { minimumWafRequestsPerIpPerMinute, stageConfigFromContext, stageEnvironment, stageNames, stages } from '../../lib/stage-config';
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

  test.each(stageNames)('%s: custom domain and WAF are off unless the context turns them on', (stage) => {
    const config = stageConfigFromContext(stage, contextOf({}));
    expect(config.customDomain).toBeUndefined();
    expect(config.waf).toBeUndefined();
    expect(config).toEqual(stages[stage]);
  });

  test("production throttle: at least twice today's peak (SCALING.md), well under the account limit it shares with staging", () => {
    const peakRps = (assumptions.businessKeysAtPeak * businessPerMinute) / 60;
    const throttle = stages.production.throttle!;
    expect(throttle.rateLimit).toBeGreaterThanOrEqual(2 * peakRps);
    expect(throttle.rateLimit + stages.staging.throttle!.rateLimit).toBeLessThanOrEqual(awsLimits.apiGatewayRps / 2);
    expect(throttle.burstLimit).toBeLessThan(5_000);
  });

  test("the authorizer's reserved concurrency serves a key flood at the stage throttle (20 ms a call) and leaves the region most of its pool", () => {
    for (const stage of stageNames) {
      const { throttle, authorizerReservedConcurrency } = stages[stage];
      expect(authorizerReservedConcurrency).toBeGreaterThanOrEqual((throttle!.rateLimit * assumptions.durationsMs.authorizer) / 1000);
      expect(authorizerReservedConcurrency).toBeLessThanOrEqual(awsLimits.lambdaConcurrency / 10);
    }
  });

  test('a staging stage throttle stays under the account limit, so staging cannot starve production', () => {
    const throttle = stages.staging.throttle!;
    expect(throttle.rateLimit).toBeLessThan(10_000);
    expect(throttle.burstLimit).toBeLessThan(5_000);
  });
});

const businessPerMinute = (() => {
  const limits = plans.business.limits;
  if (limits === 'custom') throw new Error('The Business plan has fixed limits.');
  return limits.perMinute;
})();

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

  test('WAF from <stage>WafRateLimit, requests per client IP per minute', () => {
    expect(stageConfigFromContext('staging', contextOf({ stagingWafRateLimit: '5000' })).waf).toEqual({ requestsPerIpPerMinute: 5000 });
    expect(stageConfigFromContext('staging', contextOf({ stagingWafRateLimit: 5000 })).waf).toEqual({ requestsPerIpPerMinute: 5000 });
  });

  test('a WAF limit that could refuse what the contract allows one key fails', () => {
    const largestPerMinute = Math.max(...Object.values(plans).map(({ limits }) => (limits === 'custom' ? 0 : limits.perMinute)));
    expect(minimumWafRequestsPerIpPerMinute).toBe(2 * largestPerMinute);
    expect(() =>
      stageConfigFromContext('staging', contextOf({ stagingWafRateLimit: String(minimumWafRequestsPerIpPerMinute - 1) })),
    ).toThrow(/WafRateLimit must be/);
    expect(
      stageConfigFromContext('staging', contextOf({ stagingWafRateLimit: String(minimumWafRequestsPerIpPerMinute) })).waf,
    ).toBeDefined();
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
