import { alarmState, evaluateExpression, type Sample, samplesOf } from '../support/alarm-evaluator';

/** The evaluator the rollback-alarm acceptance stands on, checked against the rules it imitates. */
const resolve = (value: unknown) => String(value);
const metric = { Namespace: 'N', MetricName: 'Failures', Dimensions: [{ Name: 'fn', Value: 'f' }] };
const alarm = (extra: Record<string, unknown> = {}) => ({
  ...metric,
  Statistic: 'Sum',
  Period: 60,
  EvaluationPeriods: 4,
  DatapointsToAlarm: 2,
  Threshold: 1,
  ComparisonOperator: 'GreaterThanOrEqualToThreshold',
  TreatMissingData: 'notBreaching',
  ...extra,
});
const at = (minute: number, value = 1, dimensions: Record<string, string> = { fn: 'f' }): Sample => ({
  namespace: 'N',
  metricName: 'Failures',
  dimensions,
  minute,
  value,
});

it('M out of N: ALARM once DatapointsToAlarm of the last EvaluationPeriods breach, and only then', () => {
  const samples = [at(0), at(2)];
  expect(alarmState(alarm(), samples, 0, resolve)).toBe('OK');
  expect(alarmState(alarm(), samples, 2, resolve)).toBe('ALARM');
  // Minute 0 has left the window of minutes 4 to 7.
  expect(alarmState(alarm(), samples, 5, resolve)).toBe('OK');
});

it('missing data: notBreaching is within the threshold, breaching breaches, missing with no data is INSUFFICIENT_DATA', () => {
  expect(alarmState(alarm(), [], 3, resolve)).toBe('OK');
  expect(alarmState(alarm({ TreatMissingData: 'breaching' }), [], 3, resolve)).toBe('ALARM');
  expect(alarmState(alarm({ TreatMissingData: 'missing' }), [], 3, resolve)).toBe('INSUFFICIENT_DATA');
});

it('a metric is its exact dimension set: a sample with one more dimension is another metric', () => {
  expect(alarmState(alarm({ DatapointsToAlarm: 1 }), [at(0, 5, { fn: 'f', version: '2' })], 0, resolve)).toBe('OK');
  expect(alarmState(alarm({ DatapointsToAlarm: 1 }), [at(0, 5, { fn: 'f' })], 0, resolve)).toBe('ALARM');
});

it('metric math: FILL, IF, comparisons and AND as 1 and 0; both branches of IF are computed (a series each), so no division by zero may hide in either', () => {
  expect(evaluateExpression('IF(FILL(a, 0) >= 10 AND b > 0, 100 * FILL(a, 0) / b, 0)', { a: 20, b: 40 })).toBe(50);
  expect(evaluateExpression('IF(FILL(a, 0) >= 10 AND b > 0, 100 * FILL(a, 0) / b, 0)', { a: undefined, b: 40 })).toBe(0);
  expect(evaluateExpression('(2 > 1) + (1 > 2) - 3', {})).toBe(-2);
  expect(() => evaluateExpression('a / b', { a: 1, b: 0 })).toThrow(/division by zero/);
  expect(() => evaluateExpression('IF(b > 0, a / b, 0)', { a: 1, b: 0 })).toThrow(/division by zero/);
});

it('an EMF line gives one sample per metric per dimension set', () => {
  const line = {
    _aws: { CloudWatchMetrics: [{ Namespace: 'N', Dimensions: [['fn', 'version'], ['fn']], Metrics: [{ Name: 'Failures' }] }] },
    fn: 'f',
    version: '2',
    Failures: 1,
  };
  expect(samplesOf(line, 3)).toEqual([at(3, 1, { fn: 'f', version: '2' }), at(3, 1, { fn: 'f' })]);
});
