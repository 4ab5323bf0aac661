/**
 * A small evaluator of CloudWatch alarm semantics, for the subset the rollback
 * alarms use, run on the alarm definitions of a synthesized template and on
 * the embedded-metric-format lines the handlers wrote. Each rule names the AWS
 * page it imitates; what CloudWatch does beyond the subset is not modelled.
 */

type Json = Record<string, any>;

/** One value a metric received: from one EMF line, for one of its dimension sets. */
export interface Sample {
  namespace: string;
  metricName: string;
  dimensions: Record<string, string>;
  /** The minute it belongs to (0 = the first minute of the scenario). */
  minute: number;
  value: number;
  /** How many times the value was received (1 unless set): a statistic set, as PutMetricData's StatisticValues carry. */
  count?: number;
}

/**
 * The samples an EMF line holds: each metric of each directive, once per
 * dimension set, with the values of the set's dimension keys from the line's
 * root ("Specification: Embedded metric format": Dimensions is "an array of
 * DimensionSet arrays", each key "MUST" name a root member holding its value,
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html).
 */
export function samplesOf(line: Json, minute: number): Sample[] {
  const directives = (line._aws?.CloudWatchMetrics ?? []) as { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[];
  return directives.flatMap((directive) =>
    directive.Dimensions.flatMap((set) =>
      directive.Metrics.map((metric) => ({
        namespace: directive.Namespace,
        metricName: metric.Name,
        dimensions: Object.fromEntries(set.map((key) => [key, String(line[key])])),
        minute,
        value: Number(line[metric.Name]),
      })),
    ),
  );
}

/** A template value of a dimension (a string, a Ref or a GetAtt) as the text the scenario's samples carry for it. */
export type Resolve = (value: unknown) => string;

/** The statistic set of one metric in one minute. */
interface Aggregate {
  sum: number;
  count: number;
  min: number;
  max: number;
}

const metricKey = (namespace: string, metricName: string, dimensions: Record<string, string>) =>
  `${namespace}|${metricName}|${Object.entries(dimensions)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, value]) => `${name}=${value}`)
    .join(',')}`;

/** The samples by metric and minute, built once per scenario (a scenario can hold a hundred thousand samples). */
const indexes = new WeakMap<Sample[], Map<string, Map<number, Aggregate>>>();
function indexOf(samples: Sample[]): Map<string, Map<number, Aggregate>> {
  let index = indexes.get(samples);
  if (index) return index;
  index = new Map();
  for (const s of samples) {
    const key = metricKey(s.namespace, s.metricName, s.dimensions);
    const minutes = index.get(key) ?? new Map<number, Aggregate>();
    index.set(key, minutes);
    const count = s.count ?? 1;
    const at = minutes.get(s.minute);
    if (!at) minutes.set(s.minute, { sum: s.value * count, count, min: s.value, max: s.value });
    else
      Object.assign(at, {
        sum: at.sum + s.value * count,
        count: at.count + count,
        min: Math.min(at.min, s.value),
        max: Math.max(at.max, s.value),
      });
  }
  indexes.set(samples, index);
  return index;
}

/**
 * A metric is its namespace, name and exact set of dimensions: "CloudWatch
 * treats each unique combination of dimensions as a separate metric"
 * ("Amazon CloudWatch concepts", Dimensions,
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch_concepts.html#Dimension).
 * A statistic of the samples of minutes `from` to `to` (one period), or
 * undefined when they have none (Sum, SampleCount, Average, Minimum, Maximum:
 * "Statistics definitions",
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Statistics-definitions.html).
 */
function statistic(
  samples: Sample[],
  metric: Json,
  stat: string,
  period: { from: number; to: number },
  resolve: Resolve,
): number | undefined {
  const wanted = Object.fromEntries(((metric.Dimensions ?? []) as Json[]).map((d) => [d.Name as string, resolve(d.Value)]));
  const minutes = indexOf(samples).get(metricKey(metric.Namespace, metric.MetricName, wanted));
  let total: Aggregate | undefined;
  for (let m = period.from; m <= period.to; m++) {
    const at = minutes?.get(m);
    if (!at) continue;
    total = total
      ? { sum: total.sum + at.sum, count: total.count + at.count, min: Math.min(total.min, at.min), max: Math.max(total.max, at.max) }
      : { ...at };
  }
  if (!total) return undefined;
  const of: Record<string, number> = {
    Sum: total.sum,
    SampleCount: total.count,
    Average: total.sum / total.count,
    Minimum: total.min,
    Maximum: total.max,
  };
  if (!(stat in of)) throw new Error(`statistic ${stat} is outside the evaluator's subset`);
  return of[stat];
}

// ---- metric math: numbers, ids, + - * /, comparisons, AND, IF(), FILL(x, n) ----------------------
// "Metric math syntax and functions"
// (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html):
// - basic arithmetic: "Missing values in a time series are treated as 0. If the
//   value of a data point causes a function to attempt to divide by zero, the
//   data point is dropped" (a point missing from both operands stays missing);
// - comparison and logical operators give 1 for true and 0 for false, and
//   "only one of the time series has a value": the missing one "as 0";
// - IF(c, a, b): a where c is not 0, b where it is 0; no point where c has none;
//   0 where c is true and a has no point; no point where c is false and b has none;
// - FILL(m, value) "fills the missing values of a time series": every period of
//   the alarm's range has a value, even one no metric reported (its note: "FILL
//   replaces that missing data point with the requested value").
// One period at a time: undefined is a missing point.

type Token = { kind: 'num'; value: number } | { kind: 'id'; value: string } | { kind: 'op'; value: string };
type Point = number | undefined;

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s*(?:(\d+(?:\.\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|(>=|<=|==|!=|&&|[-+*/(),<>]))/y;
  while (pattern.lastIndex < expression.length) {
    const match = pattern.exec(expression);
    if (!match) break;
    if (match[1]) tokens.push({ kind: 'num', value: Number(match[1]) });
    else if (match[2]) tokens.push(match[2] === 'AND' ? { kind: 'op', value: '&&' } : { kind: 'id', value: match[2] });
    else tokens.push({ kind: 'op', value: match[3]! });
  }
  if (expression.slice(pattern.lastIndex).trim()) throw new Error(`cannot read the expression at: ${expression.slice(pattern.lastIndex)}`);
  return tokens;
}

/** Two points combined: missing only when both are; a missing one counts as 0. */
const both = (a: Point, b: Point, apply: (x: number, y: number) => Point): Point =>
  a === undefined && b === undefined ? undefined : apply(a ?? 0, b ?? 0);

const operators: Record<string, (a: number, b: number) => Point> = {
  '*': (a, b) => a * b,
  '/': (a, b) => (b === 0 ? undefined : a / b),
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '>': (a, b) => Number(a > b),
  '>=': (a, b) => Number(a >= b),
  '<': (a, b) => Number(a < b),
  '<=': (a, b) => Number(a <= b),
  '==': (a, b) => Number(a === b),
  '!=': (a, b) => Number(a !== b),
  '&&': (a, b) => Number(a !== 0 && b !== 0),
};

type Compiled = (values: Record<string, Point>) => Point;
/** Expressions compiled once: a Monte Carlo run evaluates the same few expressions millions of times. */
const compiled = new Map<string, Compiled>();

/** `expression` read into a function of each query id's value in one period. */
function compile(expression: string): Compiled {
  const tokens = tokenize(expression);
  let at = 0;
  const take = (op?: string) => {
    const token = tokens[at++];
    if (!token || (op && !(token.kind === 'op' && token.value === op))) throw new Error(`expected ${op} in ${expression}`);
    return token;
  };
  const isOp = (ops: string[]) => tokens[at]?.kind === 'op' && ops.includes(tokens[at]!.value as string);
  const binary = (next: () => Compiled, ops: string[]) => (): Compiled => {
    let left = next();
    while (isOp(ops)) {
      const apply = operators[take().value as string]!;
      const [a, b] = [left, next()];
      left = (values) => both(a(values), b(values), apply);
    }
    return left;
  };
  const call = (name: string): Compiled => {
    take('(');
    const args = [logical()];
    while (isOp([','])) {
      take(',');
      args.push(logical());
    }
    take(')');
    const [first, second, third] = args as [Compiled, Compiled, Compiled];
    if (name === 'FILL' && args.length === 2) return (values) => first(values) ?? second(values);
    if (name !== 'IF' || args.length !== 3) throw new Error(`${name} with ${args.length} arguments is outside the evaluator's subset`);
    return (values) => {
      const condition = first(values);
      if (condition === undefined) return undefined;
      return condition !== 0 ? (second(values) ?? 0) : third(values);
    };
  };
  const primary = (): Compiled => {
    const token = take();
    if (token.kind === 'num') return () => token.value;
    if (token.kind === 'op' && token.value === '(') {
      const inner = logical();
      take(')');
      return inner;
    }
    if (token.kind === 'op' && token.value === '-') {
      const inner = primary();
      return (values) => {
        const value = inner(values);
        return value === undefined ? undefined : -value;
      };
    }
    if (token.kind !== 'id') throw new Error(`unexpected ${token.value} in ${expression}`);
    if (tokens[at]?.kind === 'op' && tokens[at]!.value === '(') return call(token.value);
    const id = token.value;
    return (values) => {
      if (!(id in values)) throw new Error(`${id} is no query of the alarm`);
      return values[id];
    };
  };
  const product = binary(primary, ['*', '/']);
  const sum = binary(product, ['+', '-']);
  const comparison = binary(sum, ['>', '>=', '<', '<=', '==', '!=']);
  const logical = binary(comparison, ['&&']);
  const result = logical();
  if (at !== tokens.length) throw new Error(`unread tokens in ${expression}`);
  return result;
}

/** The value of `expression` in one period, given each query id's value there (undefined: missing); undefined if the point is missing. */
export function evaluateExpression(expression: string, values: Record<string, Point>): Point {
  let fn = compiled.get(expression);
  if (!fn) {
    fn = compile(expression);
    compiled.set(expression, fn);
  }
  return fn(values);
}

/** The alarm's period in minutes (the evaluator's unit): 60 s or a multiple ("Evaluating an alarm", Period). */
function periodMinutes(alarm: Json): number {
  const seconds = (alarm.Period ?? (alarm.Metrics as Json[] | undefined)?.find((q) => q.MetricStat)?.MetricStat.Period) as number;
  if (!(seconds >= 60 && seconds % 60 === 0)) throw new Error(`the evaluator models periods of whole minutes; the alarm has ${seconds} s`);
  return seconds / 60;
}

/**
 * The alarm's value in one period (minutes `from` to `to`): its metric's
 * statistic, or its ReturnData expression over its queries (every query of a
 * metric-math alarm uses the alarm's period: "Alarms on math expressions",
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html).
 */
export function periodValue(alarm: Json, samples: Sample[], period: { from: number; to: number }, resolve: Resolve): Point {
  // Each evaluation re-reads the periods of the one before: computed once per scenario.
  const byAlarm = periodValues.get(samples) ?? new WeakMap<Json, Map<string, Point>>();
  periodValues.set(samples, byAlarm);
  const values = byAlarm.get(alarm) ?? new Map<string, Point>();
  byAlarm.set(alarm, values);
  const key = `${period.from}:${period.to}`;
  if (!values.has(key)) values.set(key, computePeriodValue(alarm, samples, period, resolve));
  return values.get(key);
}
const periodValues = new WeakMap<Sample[], WeakMap<Json, Map<string, Point>>>();

function computePeriodValue(alarm: Json, samples: Sample[], period: { from: number; to: number }, resolve: Resolve): Point {
  if (alarm.MetricName) return statistic(samples, alarm, alarm.Statistic ?? alarm.ExtendedStatistic, period, resolve);
  const queries = alarm.Metrics as Json[];
  const values: Record<string, Point> = {};
  for (const query of queries.filter((q) => q.MetricStat)) {
    values[query.Id] = statistic(samples, query.MetricStat.Metric, query.MetricStat.Stat, period, resolve);
  }
  const returned = queries.filter((q) => q.ReturnData !== false);
  if (returned.length !== 1) throw new Error('an alarm returns exactly one query');
  return returned[0]!.Expression ? evaluateExpression(returned[0]!.Expression, values) : values[returned[0]!.Id];
}

export type AlarmState = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';

const compare: Record<string, (value: number, threshold: number) => boolean> = {
  GreaterThanOrEqualToThreshold: (v, t) => v >= t,
  GreaterThanThreshold: (v, t) => v > t,
  LessThanThreshold: (v, t) => v < t,
  LessThanOrEqualToThreshold: (v, t) => v <= t,
};

/**
 * How many periods CloudWatch retrieves beyond EvaluationPeriods. AWS publishes
 * the evaluation range only by example: 5 periods for 3 evaluation periods
 * ("How alarm state is evaluated when data is missing",
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarms-and-missing-data.html).
 */
export const EVALUATION_RANGE_EXTRA = 2;

/** One datapoint of the evaluation range: breaching, not breaching, or missing. */
export type Datapoint = 'X' | '0' | '-';

/**
 * The alarm's state from the datapoints of its evaluation range (oldest
 * first), following "How alarm state is evaluated when data is missing"
 * and "Avoiding premature transitions to alarm state"
 * (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarms-and-missing-data.html):
 * - with at least EvaluationPeriods real datapoints in the range, the most
 *   recent that many are evaluated, whatever TreatMissingData says;
 * - with fewer, every real one counts and the rest are filled: breaching and
 *   notBreaching fill as they say; missing and ignore fill nothing: ALARM if
 *   enough real ones breach, OK if any real one does not, else (only breaching
 *   ones, too few) `missing` goes to ALARM when the oldest breaching one is at
 *   least DatapointsToAlarm periods old (the premature-alarm rule) and to
 *   INSUFFICIENT_DATA otherwise, and `ignore` keeps the current state;
 * - with none, missing is INSUFFICIENT_DATA and ignore keeps the current state.
 * ALARM when DatapointsToAlarm (default: all) of the evaluated ones breach.
 */
export function stateOfRange(
  range: Datapoint[],
  alarm: { n: number; m: number; treat: string },
  current: AlarmState = 'INSUFFICIENT_DATA',
): AlarmState {
  const { n, m, treat } = alarm;
  const real = range.filter((point) => point !== '-');
  const breaches = (points: Datapoint[]) => points.filter((point) => point === 'X').length;
  const verdict = (breaching: number): AlarmState => (breaching >= m ? 'ALARM' : 'OK');
  if (real.length >= n) return verdict(breaches(real.slice(-n)));
  if (treat === 'breaching') return verdict(breaches(real) + n - real.length);
  if (treat === 'notBreaching') return verdict(breaches(real));
  if (real.length === 0) return treat === 'ignore' ? current : 'INSUFFICIENT_DATA';
  if (breaches(real) >= m) return 'ALARM';
  if (real.some((point) => point === '0')) return 'OK';
  if (treat === 'ignore') return current;
  const oldestBreachAge = range.length - range.indexOf('X');
  return oldestBreachAge >= m ? 'ALARM' : 'INSUFFICIENT_DATA';
}

/**
 * The alarm's state when evaluated at the end of `minute`. Its evaluation
 * window slides: each evaluation takes the periods ending with that minute
 * ("Alarm evaluation window", sliding window: "an alarm with a 1-hour period and
 * 1 evaluation period might evaluate the time range 13:07–14:07 on one
 * evaluation and 13:08–14:08 on the next", and it "evaluates every minute",
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarm-evaluation-window.html).
 * The range is EvaluationPeriods + EVALUATION_RANGE_EXTRA periods back, read
 * as stateOfRange says. `current` is the state before (for `ignore`).
 */
export function alarmState(alarm: Json, samples: Sample[], minute: number, resolve: Resolve, current?: AlarmState): AlarmState {
  const minutes = periodMinutes(alarm);
  const n = alarm.EvaluationPeriods as number;
  const m = (alarm.DatapointsToAlarm as number | undefined) ?? n;
  const treat = (alarm.TreatMissingData as string | undefined) ?? 'missing';
  const range: Datapoint[] = [];
  for (let k = n + EVALUATION_RANGE_EXTRA - 1; k >= 0; k--) {
    const to = minute - k * minutes;
    const value = periodValue(alarm, samples, { from: to - minutes + 1, to }, resolve);
    range.push(value === undefined ? '-' : compare[alarm.ComparisonOperator]!(value, alarm.Threshold) ? 'X' : '0');
  }
  return stateOfRange(range, { n, m, treat }, current);
}
