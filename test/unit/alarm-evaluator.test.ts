import { type AlarmState, alarmState, type Datapoint, evaluateExpression, type Sample, samplesOf } from '../support/alarm-evaluator';

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
  // Minute 0 is still in the evaluation range at minute 5 (minutes 0 to 5), not at minute 6.
  expect(alarmState(alarm(), samples, 5, resolve)).toBe('ALARM');
  expect(alarmState(alarm(), samples, 6, resolve)).toBe('OK');
});

it('missing data with no datapoint at all: notBreaching is OK, breaching ALARM, missing INSUFFICIENT_DATA, ignore keeps the state', () => {
  expect(alarmState(alarm(), [], 3, resolve)).toBe('OK');
  expect(alarmState(alarm({ TreatMissingData: 'breaching' }), [], 3, resolve)).toBe('ALARM');
  expect(alarmState(alarm({ TreatMissingData: 'missing' }), [], 3, resolve)).toBe('INSUFFICIENT_DATA');
  expect(alarmState(alarm({ TreatMissingData: 'ignore' }), [], 3, resolve, 'ALARM')).toBe('ALARM');
});

/**
 * AWS's own tables, row by row: "Configuring how CloudWatch alarms treat missing
 * data", "How alarm state is evaluated when data is missing" (Period 5 minutes,
 * 3 evaluation periods, an evaluation range of 5; the most recent datapoint on
 * the right; 0 not breaching, X breaching, - missing),
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarms-and-missing-data.html.
 * Driven through alarmState on samples, so the range, the period's minutes and
 * the M out of N rule are the evaluator's own; "retain" is the state before.
 */
describe("AWS's missing-data tables", () => {
  const treatments = ['missing', 'ignore', 'breaching', 'notBreaching'] as const;
  type Row = [string, ...(AlarmState | 'retain')[]];
  const threeOfThree: Row[] = [
    ['0 - X - X', 'OK', 'OK', 'OK', 'OK'],
    ['0 - - - -', 'OK', 'OK', 'OK', 'OK'],
    ['- - - - -', 'INSUFFICIENT_DATA', 'retain', 'ALARM', 'OK'],
    ['0 X X - X', 'ALARM', 'ALARM', 'ALARM', 'ALARM'],
    ['- - X - -', 'ALARM', 'retain', 'ALARM', 'OK'],
  ];
  const twoOfThree: Row[] = [
    ['0 - X - X', 'ALARM', 'ALARM', 'ALARM', 'ALARM'],
    ['0 0 X 0 X', 'ALARM', 'ALARM', 'ALARM', 'ALARM'],
    ['0 - X - -', 'OK', 'OK', 'ALARM', 'OK'],
    ['- - - - 0', 'OK', 'OK', 'ALARM', 'OK'],
    ['- - - X -', 'ALARM', 'retain', 'ALARM', 'OK'],
  ];
  /** The row as samples: each 5-minute period's value in its first minute (5 breaches the threshold of 1, 0 does not). */
  const samplesOfRow = (points: string) =>
    (points.split(' ') as Datapoint[]).flatMap((point, period) => (point === '-' ? [] : [at(period * 5, point === 'X' ? 5 : 0)]));
  const check =
    (datapointsToAlarm: number) =>
    (points: string, ...expected: (AlarmState | 'retain')[]) => {
      treatments.forEach((treatment, i) => {
        const fiveMinutes = alarm({ Period: 300, EvaluationPeriods: 3, DatapointsToAlarm: datapointsToAlarm, TreatMissingData: treatment });
        for (const before of ['OK', 'ALARM'] as const) {
          const want = expected[i] === 'retain' ? before : expected[i];
          // Evaluated at the end of the fifth period (minute 24).
          expect([treatment, before, alarmState(fiveMinutes, samplesOfRow(points), 24, resolve, before)]).toEqual([
            treatment,
            before,
            want,
          ]);
        }
      });
    };
  test.each(threeOfThree)('3 out of 3: %s', check(3));
  test.each(twoOfThree)('2 out of 3: %s', check(2));

  test('premature transitions avoided: - - - - X and - - - X - with 3 of 3 do not go to ALARM when missing data is missing', () => {
    const fiveMinutes = alarm({ Period: 300, EvaluationPeriods: 3, DatapointsToAlarm: 3, TreatMissingData: 'missing' });
    expect(alarmState(fiveMinutes, samplesOfRow('- - - - X'), 24, resolve)).not.toBe('ALARM');
    expect(alarmState(fiveMinutes, samplesOfRow('- - - X -'), 24, resolve)).not.toBe('ALARM');
  });
});

it('the evaluation range reaches past EvaluationPeriods: a breach 5 minutes back still counts while fewer than N real datapoints exist', () => {
  // N = 4, range 6: minute 0's breach is evaluated at minute 5, not at minute 6.
  const oneOfFour = alarm({ DatapointsToAlarm: 1 });
  expect(alarmState(oneOfFour, [at(0)], 5, resolve)).toBe('ALARM');
  expect(alarmState(oneOfFour, [at(0)], 6, resolve)).toBe('OK');
  // With 4 real datapoints after it, only those are evaluated.
  expect(alarmState(oneOfFour, [at(0), at(2, 0), at(3, 0), at(4, 0), at(5, 0)], 5, resolve)).toBe('OK');
});

it('a sliding window: a 4-minute period judged every minute sums the last 4 minutes', () => {
  const window = alarm({ Period: 240, EvaluationPeriods: 1, DatapointsToAlarm: 1, Threshold: 3 });
  const samples = [at(0), at(1), at(2), at(6)];
  expect(alarmState(window, samples, 2, resolve)).toBe('ALARM');
  expect(alarmState(window, samples, 3, resolve)).toBe('ALARM');
  // Minutes 1 to 4: two failures.
  expect(alarmState(window, samples, 4, resolve)).toBe('OK');
});

it('a metric is its exact dimension set: a sample with one more dimension is another metric', () => {
  expect(alarmState(alarm({ DatapointsToAlarm: 1 }), [at(0, 5, { fn: 'f', version: '2' })], 0, resolve)).toBe('OK');
  expect(alarmState(alarm({ DatapointsToAlarm: 1 }), [at(0, 5, { fn: 'f' })], 0, resolve)).toBe('ALARM');
});

it("metric math as AWS documents it: FILL fills a period no metric reported, missing is 0 beside a value, a division by zero drops the point, IF's branches", () => {
  expect(evaluateExpression('IF(FILL(a, 0) >= 10 AND b > 0, 100 * FILL(a, 0) / b, 0)', { a: 20, b: 40 })).toBe(50);
  expect(evaluateExpression('IF(FILL(a, 0) >= 10 AND b > 0, 100 * FILL(a, 0) / b, 0)', { a: undefined, b: 40 })).toBe(0);
  expect(evaluateExpression('(2 > 1) + (1 > 2) - 3', {})).toBe(-2);
  // FILL gives every period a value: a minute no query reported is 0 here, not missing.
  expect(evaluateExpression('FILL(a, 0) + FILL(b, 0)', { a: undefined, b: undefined })).toBe(0);
  expect(evaluateExpression('a + b', { a: undefined, b: undefined })).toBeUndefined();
  expect(evaluateExpression('a - b', { a: 5, b: undefined })).toBe(5);
  expect(evaluateExpression('a / b', { a: 1, b: 0 })).toBeUndefined();
  // The untaken branch's dropped point does not matter; a condition with no point gives none.
  expect(evaluateExpression('IF(b > 0, a / b, 0)', { a: 1, b: 0 })).toBe(0);
  expect(evaluateExpression('IF(b, 1, 2)', { b: undefined })).toBeUndefined();
  // A true condition over a missing point gives 0 (IF(metric1, metric2, metric3)).
  expect(evaluateExpression('IF(c, a, 2)', { c: 1, a: undefined })).toBe(0);
  expect(evaluateExpression('IF(c, 1, a)', { c: 0, a: undefined })).toBeUndefined();
});

it("a FILL'd alarm has a datapoint in every period: with missing treated as missing it is OK, not INSUFFICIENT_DATA, where nothing was reported", () => {
  const filled = {
    Metrics: [
      { Id: 'f', MetricStat: { Metric: metric, Period: 60, Stat: 'Sum' }, ReturnData: false },
      { Id: 'e', Expression: 'FILL(f, 0)' },
    ],
    EvaluationPeriods: 3,
    DatapointsToAlarm: 3,
    Threshold: 1,
    ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    TreatMissingData: 'missing',
  };
  expect(alarmState(filled, [], 4, resolve)).toBe('OK');
  expect(alarmState({ ...filled, Metrics: [{ ...filled.Metrics[0], ReturnData: true }] }, [], 4, resolve)).toBe('INSUFFICIENT_DATA');
});

it('statistic sets: a sample received count times weighs count times; Minimum and Maximum', () => {
  const weighted: Sample[] = [{ ...at(0, 10), count: 3 }, at(0, 2)];
  expect(alarmState(alarm({ DatapointsToAlarm: 1, Threshold: 32 }), weighted, 0, resolve)).toBe('ALARM');
  expect(alarmState(alarm({ DatapointsToAlarm: 1, Threshold: 33 }), weighted, 0, resolve)).toBe('OK');
  expect(alarmState(alarm({ DatapointsToAlarm: 1, Statistic: 'SampleCount', Threshold: 4 }), weighted, 0, resolve)).toBe('ALARM');
  expect(alarmState(alarm({ DatapointsToAlarm: 1, Statistic: 'Minimum', Threshold: 2 }), weighted, 0, resolve)).toBe('ALARM');
  expect(alarmState(alarm({ DatapointsToAlarm: 1, Statistic: 'Maximum', Threshold: 11 }), weighted, 0, resolve)).toBe('OK');
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
