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

/**
 * A metric is its namespace, name and exact set of dimensions: "CloudWatch
 * treats each unique combination of dimensions as a separate metric"
 * ("Amazon CloudWatch concepts", Dimensions,
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch_concepts.html#Dimension).
 * A statistic of the minute's samples, or undefined when the minute has none
 * (Sum, SampleCount and Average: "Statistics definitions",
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Statistics-definitions.html).
 */
function statistic(samples: Sample[], metric: Json, stat: string, minute: number, resolve: Resolve): number | undefined {
  const wanted = Object.fromEntries(((metric.Dimensions ?? []) as Json[]).map((d) => [d.Name as string, resolve(d.Value)]));
  const values = samples
    .filter(
      (s) =>
        s.minute === minute &&
        s.namespace === metric.Namespace &&
        s.metricName === metric.MetricName &&
        Object.keys(s.dimensions).length === Object.keys(wanted).length &&
        Object.entries(wanted).every(([name, value]) => s.dimensions[name] === value),
    )
    .map((s) => s.value);
  if (values.length === 0) return undefined;
  const sum = values.reduce((a, b) => a + b, 0);
  if (stat === 'Sum') return sum;
  if (stat === 'SampleCount') return values.length;
  if (stat === 'Average') return sum / values.length;
  throw new Error(`statistic ${stat} is outside the evaluator's subset`);
}

// ---- metric math: numbers, ids, + - * /, comparisons, AND, IF(), FILL(id, n) ----------------------
// "Metric math syntax and functions": comparison and logical operators give 1
// for true and 0 for false; IF(condition, a, b) takes a where the condition is
// not 0; FILL(m, value) fills m's missing values
// (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/using-metric-math.html).

type Token = { kind: 'num'; value: number } | { kind: 'id'; value: string } | { kind: 'op'; value: string };

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

/** The value of `expression` in one period, given each query id's value there (undefined: missing). */
export function evaluateExpression(expression: string, values: Record<string, number | undefined>): number {
  const tokens = tokenize(expression);
  let at = 0;
  const peek = () => tokens[at];
  const take = (op?: string) => {
    const token = tokens[at++];
    if (!token || (op && !(token.kind === 'op' && token.value === op))) throw new Error(`expected ${op} in ${expression}`);
    return token;
  };
  const isOp = (...ops: string[]) => peek()?.kind === 'op' && ops.includes(peek()!.value as string);
  const binary = (next: () => number, ops: string[], apply: (op: string, a: number, b: number) => number) => () => {
    let left = next();
    while (isOp(...ops)) {
      const op = take().value as string;
      left = apply(op, left, next());
    }
    return left;
  };
  const primary = (): number => {
    const token = take();
    if (token.kind === 'num') return token.value;
    if (token.kind === 'op' && token.value === '(') {
      const value = logical();
      take(')');
      return value;
    }
    if (token.kind === 'op' && token.value === '-') return -primary();
    if (token.kind !== 'id') throw new Error(`unexpected ${token.value} in ${expression}`);
    if (token.value === 'IF') {
      take('(');
      const condition = logical();
      take(',');
      const whenTrue = logical();
      take(',');
      const whenFalse = logical();
      take(')');
      return condition !== 0 ? whenTrue : whenFalse;
    }
    if (token.value === 'FILL') {
      take('(');
      const id = take().value as string;
      take(',');
      const fill = logical();
      take(')');
      return values[id] ?? fill;
    }
    const value = values[token.value];
    if (value === undefined) throw new Error(`${token.value} has no value in this period and no FILL`);
    return value;
  };
  const product = binary(primary, ['*', '/'], (op, a, b) => {
    if (op === '*') return a * b;
    // Both branches of an IF are series computed in full: a division by zero in either is a gap in the alarm's data.
    if (b === 0) throw new Error(`${expression} divides by zero: a division by zero reached the alarm`);
    return a / b;
  });
  const sum = binary(product, ['+', '-'], (op, a, b) => (op === '+' ? a + b : a - b));
  const comparison = binary(sum, ['>', '>=', '<', '<=', '==', '!='], (op, a, b) =>
    Number({ '>': a > b, '>=': a >= b, '<': a < b, '<=': a <= b, '==': a === b, '!=': a !== b }[op]),
  );
  const logical = binary(comparison, ['&&'], (_op, a, b) => Number(a !== 0 && b !== 0));
  const result = logical();
  if (at !== tokens.length) throw new Error(`unread tokens in ${expression}`);
  if (!Number.isFinite(result)) throw new Error(`${expression} gave ${result}: a division by zero reached the alarm`);
  return result;
}

/**
 * The alarm's value in one period: its metric's statistic, or its
 * ReturnData expression over its queries. An expression whose queries all
 * have no datapoint in the period has none either (FILL fills a series'
 * gaps, it does not invent a period no query reported).
 */
export function periodValue(alarm: Json, samples: Sample[], minute: number, resolve: Resolve): number | undefined {
  if (alarm.MetricName) return statistic(samples, alarm, alarm.Statistic ?? alarm.ExtendedStatistic, minute, resolve);
  const queries = alarm.Metrics as Json[];
  const values: Record<string, number | undefined> = {};
  for (const query of queries.filter((q) => q.MetricStat)) {
    values[query.Id] = statistic(samples, query.MetricStat.Metric, query.MetricStat.Stat, minute, resolve);
  }
  if (Object.values(values).every((value) => value === undefined)) return undefined;
  const returned = queries.find((q) => q.Expression && q.ReturnData !== false);
  if (!returned) throw new Error('the alarm has no expression returning data');
  return evaluateExpression(returned.Expression, values);
}

export type AlarmState = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';

const compare: Record<string, (value: number, threshold: number) => boolean> = {
  GreaterThanOrEqualToThreshold: (v, t) => v >= t,
  GreaterThanThreshold: (v, t) => v > t,
  LessThanThreshold: (v, t) => v < t,
  LessThanOrEqualToThreshold: (v, t) => v <= t,
};

/**
 * The alarm's state when evaluated at the end of `minute`: it looks at the
 * last EvaluationPeriods periods and goes to ALARM when DatapointsToAlarm of
 * them (default: all) breach ("Evaluating an alarm", M out of N,
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/AlarmThatSendsEmail.html#alarm-evaluation).
 * A missing period counts as TreatMissingData says: notBreaching as within the
 * threshold, breaching as breaching; missing (the default) leaves it out, and
 * with every period missing the alarm has INSUFFICIENT_DATA
 * ("Configuring how CloudWatch alarms treat missing data",
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarms-and-missing-data.html).
 * Periods are the alarm's own (60 s here: the evaluator's minutes).
 */
export function alarmState(alarm: Json, samples: Sample[], minute: number, resolve: Resolve): AlarmState {
  const period = alarm.Period ?? (alarm.Metrics as Json[] | undefined)?.find((q) => q.MetricStat)?.MetricStat.Period;
  if (period !== 60) throw new Error(`the evaluator models 60-second periods; the alarm has ${period}`);
  const n = alarm.EvaluationPeriods as number;
  const m = (alarm.DatapointsToAlarm as number | undefined) ?? n;
  const treat = (alarm.TreatMissingData as string | undefined) ?? 'missing';
  const breaches: boolean[] = [];
  for (let p = minute - n + 1; p <= minute; p++) {
    const value = p < 0 ? undefined : periodValue(alarm, samples, p, resolve);
    if (value !== undefined) breaches.push(compare[alarm.ComparisonOperator]!(value, alarm.Threshold));
    else if (treat === 'breaching') breaches.push(true);
    else if (treat === 'notBreaching') breaches.push(false);
  }
  if (breaches.length === 0) return 'INSUFFICIENT_DATA';
  return breaches.filter(Boolean).length >= m ? 'ALARM' : 'OK';
}
