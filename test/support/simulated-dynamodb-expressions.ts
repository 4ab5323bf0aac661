/**
 * DynamoDB's expression language, the part our code writes, parsed and
 * evaluated as DynamoDB does for the in-memory store of the customer
 * simulation (test/support/simulated-dynamodb.ts):
 * - condition expressions: comparisons (= <> < <= > >=), BETWEEN, IN,
 *   attribute_exists / attribute_not_exists, NOT, AND, OR and parentheses, with
 *   NOT binding tighter than AND, and AND tighter than OR ("Condition and
 *   filter expressions, operators, and functions", Amazon DynamoDB Developer Guide,
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.OperatorsAndFunctions.html);
 * - update expressions: SET with `+`, `-` and if_not_exists, and REMOVE, every
 *   operand read from the item as it was before the update, a nested path only
 *   under a map that exists ("Using update expressions in DynamoDB",
 *   https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html);
 * - projection expressions of top-level attributes, and key conditions.
 * What our code does not write (list indexes, ADD, DELETE, size, begins_with,
 * comparisons whose outcome DynamoDB's documentation leaves open) is refused
 * with UnsupportedBySimulation, never answered by a guess.
 */

/** Something the simulation does not model: a TypeError, so dynamo-errors.ts classes it a bug of ours (500), never a 503. */
export class UnsupportedBySimulation extends TypeError {
  constructor(what: string) {
    super(`The simulated DynamoDB does not model ${what}`);
    this.name = 'UnsupportedBySimulation';
  }
}

/** What DynamoDB answers a malformed request with: a client fault (as the SDK marks it), so dynamo-errors.ts classes it a bug of ours (500). */
export class ValidationError extends Error {
  readonly $fault = 'client';
  readonly $metadata = {};
  constructor(message: string) {
    super(message);
    this.name = 'ValidationException';
  }
}

export type Item = Record<string, unknown>;
/** A document path: attribute names, after #name substitution. */
export type Path = string[];

type Operand = { kind: 'path'; path: RawPath } | { kind: 'value'; name: string };
/** A path as written: segments that are names or #placeholders. */
type RawPath = string[];

export type Condition =
  | { kind: 'or' | 'and'; left: Condition; right: Condition }
  | { kind: 'not'; inner: Condition }
  | { kind: 'exists' | 'not_exists'; path: RawPath }
  | { kind: 'compare'; op: Comparator; left: Operand; right: Operand }
  | { kind: 'between'; subject: Operand; low: Operand; high: Operand }
  | { kind: 'in'; subject: Operand; options: Operand[] };

type Comparator = '=' | '<>' | '<' | '<=' | '>' | '>=';

type SetValue =
  | { kind: 'operand'; operand: Operand }
  | { kind: 'if_not_exists'; path: RawPath; fallback: Operand }
  | { kind: 'list_append'; first: SetValue; second: SetValue }
  | { kind: 'arithmetic'; op: '+' | '-'; left: SetValue; right: SetValue };

export interface UpdatePlan {
  set: { path: RawPath; value: SetValue }[];
  remove: RawPath[];
}

/** A parsed expression, with the #names and :values it names (DynamoDB refuses unused ones). */
export interface Parsed<T> {
  tree: T;
  names: Set<string>;
  values: Set<string>;
}

const TOKEN = /\s*(<>|<=|>=|[=<>(),.[\]+-]|#[A-Za-z0-9_]+|:[A-Za-z0-9_]+|[A-Za-z_][A-Za-z0-9_]*)/y;

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    if (/^\s*$/.test(text.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(text);
    if (!match) throw new ValidationError(`Invalid expression: syntax error near "${text.slice(at, at + 10)}" in "${text}"`);
    tokens.push(match[1]!);
  }
  return tokens;
}

/** A cursor over the tokens of one expression; it records the placeholders it meets. */
class Reader {
  private index = 0;
  readonly names = new Set<string>();
  readonly values = new Set<string>();
  constructor(
    private readonly tokens: string[],
    readonly text: string,
  ) {}

  peek(offset = 0): string | undefined {
    return this.tokens[this.index + offset];
  }
  keyword(word: string): boolean {
    if (this.peek()?.toUpperCase() !== word) return false;
    this.index++;
    return true;
  }
  take(): string {
    const token = this.tokens[this.index++];
    if (token === undefined) throw new ValidationError(`Invalid expression: unexpected end of "${this.text}"`);
    return token;
  }
  expect(token: string): void {
    const found = this.take();
    if (found !== token) throw new ValidationError(`Invalid expression: expected "${token}", found "${found}" in "${this.text}"`);
  }
  done(): boolean {
    return this.index >= this.tokens.length;
  }
  path(): RawPath {
    const segments = [this.segment()];
    while (this.peek() === '.') {
      this.take();
      segments.push(this.segment());
    }
    if (this.peek() === '[') throw new UnsupportedBySimulation(`list indexes in paths ("${this.text}")`);
    return segments;
  }
  private segment(): string {
    const token = this.take();
    if (token.startsWith('#')) this.names.add(token);
    else if (!/^[A-Za-z_]/.test(token))
      throw new ValidationError(`Invalid expression: "${token}" is not an attribute name in "${this.text}"`);
    return token;
  }
  operand(): Operand {
    const token = this.peek();
    if (token?.startsWith(':')) {
      this.values.add(this.take());
      return { kind: 'value', name: token };
    }
    if (this.peek(1) === '(') throw new UnsupportedBySimulation(`the function ${token} as an operand ("${this.text}")`);
    return { kind: 'path', path: this.path() };
  }
}

const cache = new Map<string, Parsed<unknown>>();

function parsed<T>(kind: string, text: string, parse: (reader: Reader) => T): Parsed<T> {
  const cacheKey = `${kind}\u0000${text}`;
  const known = cache.get(cacheKey);
  if (known) return known as Parsed<T>;
  const reader = new Reader(tokenize(text), text);
  const tree = parse(reader);
  if (!reader.done()) throw new ValidationError(`Invalid expression: unexpected "${reader.peek()}" in "${text}"`);
  const result = { tree, names: reader.names, values: reader.values };
  cache.set(cacheKey, result);
  return result;
}

export function parseCondition(text: string): Parsed<Condition> {
  return parsed('condition', text, orCondition);
}

function orCondition(reader: Reader): Condition {
  let left = andCondition(reader);
  while (reader.keyword('OR')) left = { kind: 'or', left, right: andCondition(reader) };
  return left;
}

function andCondition(reader: Reader): Condition {
  let left = notCondition(reader);
  while (reader.keyword('AND')) left = { kind: 'and', left, right: notCondition(reader) };
  return left;
}

function notCondition(reader: Reader): Condition {
  if (reader.keyword('NOT')) return { kind: 'not', inner: notCondition(reader) };
  return primaryCondition(reader);
}

const comparators = new Set(['=', '<>', '<', '<=', '>', '>=']);

function primaryCondition(reader: Reader): Condition {
  if (reader.peek() === '(') {
    reader.take();
    const inner = orCondition(reader);
    reader.expect(')');
    return inner;
  }
  const word = reader.peek();
  if (reader.peek(1) === '(') return functionCondition(reader, word ?? '');
  const subject = reader.operand();
  if (reader.keyword('BETWEEN')) {
    const low = reader.operand();
    if (!reader.keyword('AND')) throw new ValidationError(`Invalid expression: BETWEEN without AND in "${reader.text}"`);
    return { kind: 'between', subject, low, high: reader.operand() };
  }
  if (reader.keyword('IN')) return { kind: 'in', subject, options: operandList(reader) };
  const op = reader.take();
  if (!comparators.has(op)) throw new ValidationError(`Invalid expression: "${op}" is not a comparator in "${reader.text}"`);
  return { kind: 'compare', op: op as Comparator, left: subject, right: reader.operand() };
}

function operandList(reader: Reader): Operand[] {
  reader.expect('(');
  const options = [reader.operand()];
  while (reader.peek() === ',') {
    reader.take();
    options.push(reader.operand());
  }
  reader.expect(')');
  return options;
}

function functionCondition(reader: Reader, name: string): Condition {
  if (name !== 'attribute_exists' && name !== 'attribute_not_exists') throw new UnsupportedBySimulation(`the function ${name}`);
  reader.take();
  reader.expect('(');
  const path = reader.path();
  reader.expect(')');
  return { kind: name === 'attribute_exists' ? 'exists' : 'not_exists', path };
}

export function parseUpdate(text: string): Parsed<UpdatePlan> {
  return parsed('update', text, (reader) => {
    const plan: UpdatePlan = { set: [], remove: [] };
    const seen = new Set<string>();
    while (!reader.done()) {
      const clause = reader.take().toUpperCase();
      if (seen.has(clause)) throw new ValidationError(`Invalid UpdateExpression: the "${clause}" section can only be used once`);
      seen.add(clause);
      if (clause === 'SET') setClause(reader, plan);
      else if (clause === 'REMOVE') removeClause(reader, plan);
      else if (clause === 'ADD' || clause === 'DELETE') throw new UnsupportedBySimulation(`the ${clause} action`);
      else throw new ValidationError(`Invalid UpdateExpression: unexpected "${clause}" in "${reader.text}"`);
    }
    return plan;
  });
}

const clauseWords = new Set(['SET', 'REMOVE', 'ADD', 'DELETE']);

function setClause(reader: Reader, plan: UpdatePlan): void {
  do {
    const path = reader.path();
    reader.expect('=');
    plan.set.push({ path, value: setValue(reader) });
  } while (reader.peek() === ',' && reader.take());
  if (!reader.done() && !clauseWords.has(reader.peek()!.toUpperCase())) {
    throw new ValidationError(`Invalid UpdateExpression: unexpected "${reader.peek()}" in "${reader.text}"`);
  }
}

function removeClause(reader: Reader, plan: UpdatePlan): void {
  do plan.remove.push(reader.path());
  while (reader.peek() === ',' && reader.take());
}

function setValue(reader: Reader): SetValue {
  const left = setOperand(reader);
  const op = reader.peek();
  if (op !== '+' && op !== '-') return left;
  reader.take();
  return { kind: 'arithmetic', op, left, right: setOperand(reader) };
}

function setOperand(reader: Reader): SetValue {
  const word = reader.peek();
  if (reader.peek(1) !== '(') return { kind: 'operand', operand: reader.operand() };
  if (word === 'list_append') return listAppend(reader);
  if (word !== 'if_not_exists') throw new UnsupportedBySimulation(`the function ${word} in an update`);
  reader.take();
  reader.expect('(');
  const path = reader.path();
  reader.expect(',');
  const fallback = reader.operand();
  reader.expect(')');
  return { kind: 'if_not_exists', path, fallback };
}

/** list_append(list1, list2): each operand a path, a value or if_not_exists (UpdateExpression, Amazon DynamoDB Developer Guide). */
function listAppend(reader: Reader): SetValue {
  reader.take();
  reader.expect('(');
  const first = setOperand(reader);
  reader.expect(',');
  const second = setOperand(reader);
  reader.expect(')');
  return { kind: 'list_append', first, second };
}

/** A projection: the top-level attributes it keeps. */
export function parseProjection(text: string): Parsed<RawPath[]> {
  return parsed('projection', text, (reader) => {
    const paths = [reader.path()];
    while (reader.peek() === ',' && reader.take()) paths.push(reader.path());
    if (paths.some((path) => path.length > 1)) throw new UnsupportedBySimulation(`nested paths in a projection ("${reader.text}")`);
    return paths;
  });
}

/** The placeholders of one request, and where its expressions read them. */
export class Placeholders {
  constructor(
    private readonly names: Record<string, string> = {},
    private readonly values: Record<string, unknown> = {},
  ) {}

  /** DynamoDB refuses a request that names a placeholder it does not define, or defines one no expression uses. */
  checkUse(expressions: Parsed<unknown>[]): void {
    const usedNames = new Set(expressions.flatMap((expression) => [...expression.names]));
    const usedValues = new Set(expressions.flatMap((expression) => [...expression.values]));
    for (const name of usedNames) {
      if (!(name in this.names))
        throw new ValidationError(`An expression attribute name used in the document path is not defined; attribute name: ${name}`);
    }
    for (const value of usedValues) {
      if (!(value in this.values))
        throw new ValidationError(`An expression attribute value used in expression is not defined; attribute value: ${value}`);
    }
    const unusedNames = Object.keys(this.names).filter((name) => !usedNames.has(name));
    if (unusedNames.length > 0)
      throw new ValidationError(`Value provided in ExpressionAttributeNames unused in expressions: keys: {${unusedNames.join(', ')}}`);
    const unusedValues = Object.keys(this.values).filter((value) => !usedValues.has(value));
    if (unusedValues.length > 0)
      throw new ValidationError(`Value provided in ExpressionAttributeValues unused in expressions: keys: {${unusedValues.join(', ')}}`);
  }

  path(raw: RawPath): Path {
    return raw.map((segment) => (segment.startsWith('#') ? this.names[segment]! : segment));
  }

  value(name: string): unknown {
    return this.values[name];
  }
}

/** A deep copy of a stored value (maps, lists, scalars). */
export function copyOf<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyOf) as T;
  const copy: Record<string, unknown> = {};
  for (const key in value) {
    const field = (value as Record<string, unknown>)[key];
    if (field !== undefined) copy[key] = copyOf(field);
  }
  return copy as T;
}

export function valueAt(item: Item | undefined, path: Path): unknown {
  let node: unknown = item;
  for (const segment of path) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = (node as Item)[segment];
  }
  return node;
}

function operandValue(operand: Operand, item: Item | undefined, placeholders: Placeholders): unknown {
  return operand.kind === 'value' ? placeholders.value(operand.name) : valueAt(item, placeholders.path(operand.path));
}

export function evaluate(condition: Condition, item: Item | undefined, placeholders: Placeholders): boolean {
  switch (condition.kind) {
    case 'or':
      return evaluate(condition.left, item, placeholders) || evaluate(condition.right, item, placeholders);
    case 'and':
      return evaluate(condition.left, item, placeholders) && evaluate(condition.right, item, placeholders);
    case 'not':
      return !evaluate(condition.inner, item, placeholders);
    case 'exists':
      return valueAt(item, placeholders.path(condition.path)) !== undefined;
    case 'not_exists':
      return valueAt(item, placeholders.path(condition.path)) === undefined;
    case 'compare':
      return compare(condition.op, operandValue(condition.left, item, placeholders), operandValue(condition.right, item, placeholders));
    case 'between': {
      const subject = operandValue(condition.subject, item, placeholders);
      const low = operandValue(condition.low, item, placeholders);
      const high = operandValue(condition.high, item, placeholders);
      return compare('>=', subject, low) && compare('<=', subject, high);
    }
    case 'in': {
      const subject = operandValue(condition.subject, item, placeholders);
      return condition.options.some((option) => compare('=', subject, operandValue(option, item, placeholders)));
    }
  }
}

type Scalar = number | string | boolean;

function scalarType(value: unknown): 'number' | 'string' | 'boolean' | 'missing' | 'other' {
  if (value === undefined) return 'missing';
  const type = typeof value;
  return type === 'number' || type === 'string' || type === 'boolean' ? type : 'other';
}

/**
 * A comparison as DynamoDB makes it. A missing attribute makes `=` and the
 * orderings false, and so does `=` between types; what `<>` says of a missing
 * attribute or of two types, and how maps, lists or booleans order, our code
 * never asks (each is guarded), so it is refused rather than guessed.
 */
function compare(op: Comparator, left: unknown, right: unknown): boolean {
  const leftType = scalarType(left);
  const rightType = scalarType(right);
  if (leftType === 'other' || rightType === 'other') throw new UnsupportedBySimulation('comparisons of maps, lists or sets');
  if (op === '<>') {
    if (leftType !== rightType) throw new UnsupportedBySimulation('<> between a missing attribute or two types');
    return left !== right;
  }
  if (leftType === 'missing' || rightType === 'missing' || leftType !== rightType) return false;
  if (op === '=') return left === right;
  if (leftType === 'boolean') throw new UnsupportedBySimulation('ordering booleans');
  const [a, b] = [left as Scalar, right as Scalar];
  if (op === '<') return a < b;
  if (op === '<=') return a <= b;
  if (op === '>') return a > b;
  return a >= b;
}

/** The item after an update: every operand read from `before`; a nested path only under a map that exists. */
export function applyUpdate(before: Item, plan: UpdatePlan, placeholders: Placeholders, keyNames: string[]): Item {
  const sets = plan.set.map(({ path, value }) => ({ path: placeholders.path(path), value: setValueOf(value, before, placeholders) }));
  const removes = plan.remove.map((path) => placeholders.path(path));
  checkPaths([...sets.map((set) => set.path), ...removes], keyNames);
  const after = copyOf(before);
  for (const { path, value } of sets) {
    const parent = valueAt(after, path.slice(0, -1));
    if (parent === null || typeof parent !== 'object' || Array.isArray(parent)) {
      throw new ValidationError('The document path provided in the update expression is invalid for update');
    }
    (parent as Item)[path.at(-1)!] = copyOf(value);
  }
  for (const path of removes) {
    const parent = valueAt(after, path.slice(0, -1));
    if (parent !== null && typeof parent === 'object' && !Array.isArray(parent)) delete (parent as Item)[path.at(-1)!];
  }
  return after;
}

function checkPaths(paths: Path[], keyNames: string[]): void {
  const written = paths.map((path) => path.join('\u0000'));
  for (const path of paths) {
    if (path.length === 1 && keyNames.includes(path[0]!)) {
      throw new ValidationError(`Cannot update attribute ${path[0]}. This attribute is part of the key`);
    }
  }
  for (const [index, path] of written.entries()) {
    const overlaps = written.some((other, otherIndex) => otherIndex !== index && (other === path || other.startsWith(`${path}\u0000`)));
    if (overlaps) throw new ValidationError('Invalid UpdateExpression: Two document paths overlap with each other');
  }
}

function setValueOf(value: SetValue, item: Item, placeholders: Placeholders): unknown {
  if (value.kind === 'operand') {
    const found = operandValue(value.operand, item, placeholders);
    if (found === undefined) {
      throw new ValidationError('The provided expression refers to an attribute that does not exist in the item');
    }
    return found;
  }
  if (value.kind === 'if_not_exists') {
    const found = valueAt(item, placeholders.path(value.path));
    return found !== undefined ? found : operandValue(value.fallback, item, placeholders);
  }
  if (value.kind === 'list_append') {
    const first = setValueOf(value.first, item, placeholders);
    const second = setValueOf(value.second, item, placeholders);
    if (!Array.isArray(first) || !Array.isArray(second)) {
      throw new ValidationError(
        'Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: list_append',
      );
    }
    return [...first, ...second];
  }
  const left = setValueOf(value.left, item, placeholders);
  const right = setValueOf(value.right, item, placeholders);
  if (typeof left !== 'number' || typeof right !== 'number') {
    throw new ValidationError('An operand in the update expression has an incorrect data type');
  }
  return value.op === '+' ? left + right : left - right;
}
