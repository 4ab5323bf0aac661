import type { Metrics } from '@aws-lambda-powertools/metrics';
import { metricNames, recordPetCreated, recordResponse } from '../../functions/runtime/metrics';
import { captureMetrics } from '../support/metrics';

/** The business metrics the dashboard and the 429 alarm read (CloudWatch EMF on stdout). */
async function emitted(run: (metrics: Metrics) => void): Promise<Record<string, unknown>[]> {
  const { lines } = await captureMetrics((metrics) => {
    run(metrics);
    // Single metrics publish themselves; publishing an empty buffer only logs "No application metrics to publish".
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  });
  return lines;
}

it('counts a 429 as a client error by code and as RateLimited by plan', async () => {
  const body = JSON.stringify({ code: 'rate_limited', message: 'm', status: 429 });
  const lines = await emitted((metrics) => recordResponse(metrics, { statusCode: 429, body }, 'free'));
  expect(lines).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ code: 'rate_limited', [metricNames.clientErrors]: 1, service: 'petstore' }),
      expect.objectContaining({ plan: 'free', [metricNames.rateLimited]: 1, service: 'petstore' }),
    ]),
  );
});

it('counts nothing for 2xx and 5xx responses', async () => {
  expect(await emitted((metrics) => recordResponse(metrics, { statusCode: 200, body: '[]' }, 'pro'))).toEqual([]);
  expect(await emitted((metrics) => recordResponse(metrics, { statusCode: 503, body: '{"code":"service_unavailable"}' }, 'pro'))).toEqual(
    [],
  );
});

it('counts created pets', async () => {
  const lines = await emitted((metrics) => recordPetCreated(metrics));
  expect(lines).toEqual([expect.objectContaining({ [metricNames.petsCreated]: 1 })]);
});
