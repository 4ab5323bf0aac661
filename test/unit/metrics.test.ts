import { Metrics } from '@aws-lambda-powertools/metrics';
import { metricNames, recordPetCreated, recordResponse } from '../../functions/runtime/metrics';

/** The business metrics the dashboard and the 429 alarm read (CloudWatch EMF on stdout). */
function emitted(run: (metrics: Metrics) => void): Record<string, unknown>[] {
  const saved = process.env.POWERTOOLS_METRICS_DISABLED;
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  });
  try {
    const metrics = new Metrics({ namespace: 'PetStore', serviceName: 'petstore' });
    run(metrics);
    metrics.publishStoredMetrics();
  } finally {
    spy.mockRestore();
    process.env.POWERTOOLS_METRICS_DISABLED = saved;
  }
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

it('counts a 429 as a client error by code and as RateLimited by plan', () => {
  const body = JSON.stringify({ code: 'rate_limited', message: 'm', status: 429 });
  const lines = emitted((metrics) => recordResponse(metrics, { statusCode: 429, body }, 'free'));
  expect(lines).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ code: 'rate_limited', [metricNames.clientErrors]: 1, service: 'petstore' }),
      expect.objectContaining({ plan: 'free', [metricNames.rateLimited]: 1, service: 'petstore' }),
    ]),
  );
});

it('counts nothing for 2xx and 5xx responses', () => {
  expect(emitted((metrics) => recordResponse(metrics, { statusCode: 200, body: '[]' }, 'pro'))).toEqual([]);
  expect(emitted((metrics) => recordResponse(metrics, { statusCode: 503, body: '{"code":"service_unavailable"}' }, 'pro'))).toEqual([]);
});

it('counts created pets', () => {
  const lines = emitted((metrics) => recordPetCreated(metrics));
  expect(lines).toEqual([expect.objectContaining({ [metricNames.petsCreated]: 1 })]);
});
