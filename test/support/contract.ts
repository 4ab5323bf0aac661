import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { type RouteDefinition, routes, stageName } from '../../definitions/routes';
import committedDocument from '../../openapi/openapi.json';
import { type SchemaCase, validateWithSecondValidator } from './second-validator';

/**
 * Contract tests: checks an HTTP response of the API against the committed
 * OpenAPI document (openapi/openapi.json) — the status is documented for the
 * operation the request matched (through the route table, as the gateway
 * routes), every required header is there, every documented header has a valid
 * value, no contract header (X-*, Link, Retry-After, Deprecation, Sunset,
 * WWW-Authenticate) appears where it is not documented, and the body matches
 * the schema of its media type. test/support/api.ts runs it on every call().
 * Every JSON body checked is also validated again, after the test file, by a
 * second, independent JSON Schema implementation (test/support/second-validator.ts),
 * as a client built on another validator would read it.
 */
type Json = Record<string, unknown>;

export interface ObservedResponse {
  status: number;
  headers: Headers;
  /** The raw body text. */
  body: string;
}

/** Headers whose presence is part of the contract: found undocumented, they fail the check. */
const ALWAYS_CONTRACT_HEADERS = ['link', 'retry-after', 'deprecation', 'sunset', 'www-authenticate'];
const UNKNOWN_ROUTE_RESPONSE = 'x-unknown-route-response';

export class ContractValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly contractHeaders: Set<string>;
  private readonly compiledRoutes: { route: RouteDefinition; pattern: RegExp }[];

  constructor(private readonly document: Json) {
    // The document is added whole, so that every $ref ("#/components/…") resolves in it;
    // OpenAPI keywords such as `example` or `x-…` are not JSON Schema: not strict.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addFormat('int64', { type: 'number', validate: (value: number) => Number.isInteger(value) });
    this.ajv.addSchema(document, 'openapi.json');
    this.contractHeaders = new Set([...ALWAYS_CONTRACT_HEADERS, ...documentedHeaderNames(document)]);
    this.compiledRoutes = routes.map((route) => ({ route, pattern: routePattern(route.path) }));
  }

  /** Everything in the response that the document does not allow; empty when it conforms. */
  violations(method: string, url: string, response: ObservedResponse): string[] {
    const found = this.responseOf(method, url, response.status);
    if ('problem' in found) return [found.problem];
    return this.responseViolations(found.pointer, response).map((problem) => `${found.where}: ${problem}`);
  }

  /** The JSON Pointer of the schema a JSON body of this response must match, if the response is documented. */
  bodySchemaPointer(method: string, url: string, status: number, contentType: string | null): string | undefined {
    const found = this.responseOf(method, url, status);
    if ('problem' in found) return undefined;
    const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    const content = this.resolve(this.at(found.pointer) as Json).content as Json | undefined;
    return content && mediaType in content ? `${found.pointer}/content/${escapePointerSegment(mediaType)}/schema` : undefined;
  }

  /** The Response object of the document for a request and a status, by its JSON Pointer. */
  private responseOf(method: string, url: string, status: number): { pointer: string; where: string } | { problem: string } {
    const response = { status };
    const { pathname } = new URL(url);
    const prefix = `/${stageName}`;
    const resourcePath = pathname.startsWith(`${prefix}/`) ? pathname.slice(prefix.length) : undefined;
    const route =
      resourcePath === undefined
        ? undefined
        : this.compiledRoutes.find((candidate) => candidate.route.method === method.toUpperCase() && candidate.pattern.test(resourcePath))
            ?.route;
    const where = `${method.toUpperCase()} ${pathname} → ${response.status}`;

    let pointer: string;
    if (route) {
      const operationPointer = `/paths/${escapePointerSegment(route.path)}/${route.method.toLowerCase()}`;
      const operation = this.at(operationPointer) as Json | undefined;
      if (!operation || operation.operationId !== route.operationId)
        return { problem: `${where}: the operation ${route.operationId} of the route table is not in the document` };
      const responses = (operation.responses ?? {}) as Json;
      if (!(String(response.status) in responses)) {
        return {
          problem: `${where}: status ${response.status} is not documented for ${route.operationId} (documented: ${Object.keys(responses).join(', ')})`,
        };
      }
      pointer = `${operationPointer}/responses/${response.status}`;
    } else {
      const answer = this.document[UNKNOWN_ROUTE_RESPONSE] as Json | undefined;
      if (!answer) return { problem: `${where}: the document has no ${UNKNOWN_ROUTE_RESPONSE}` };
      if (answer['x-status'] !== response.status)
        return { problem: `${where}: an unknown route must answer ${String(answer['x-status'])}` };
      pointer = `/${UNKNOWN_ROUTE_RESPONSE}`;
    }
    return { pointer, where };
  }

  private responseViolations(pointer: string, response: ObservedResponse): string[] {
    const problems: string[] = [];
    const definition = this.resolve(this.at(pointer) as Json);
    const documented = (definition.headers ?? {}) as Record<string, Json>;
    const documentedNames = new Set(Object.keys(documented).map((name) => name.toLowerCase()));

    for (const [name, header] of Object.entries(documented)) {
      const value = response.headers.get(name);
      if (value === null) {
        if (this.resolve(header).required === true) problems.push(`required header ${name} is missing`);
        continue;
      }
      const schemaPointer = `${pointer}/headers/${escapePointerSegment(name)}/schema`;
      const schema = this.at(schemaPointer) as Json;
      const validate = this.validator(schemaPointer);
      if (!validate(headerValue(value, schema)))
        problems.push(`header ${name}: ${JSON.stringify(value)} ${this.ajv.errorsText(validate.errors)}`);
    }
    response.headers.forEach((_, name) => {
      const lower = name.toLowerCase();
      if ((lower.startsWith('x-') || this.contractHeaders.has(lower)) && !documentedNames.has(lower)) {
        problems.push(`header ${name} is not documented for this response`);
      }
    });

    const content = definition.content as Record<string, unknown> | undefined;
    if (!content) {
      if (response.body !== '') problems.push('a body where none is documented');
      return problems;
    }
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    if (!(mediaType in content))
      return [...problems, `Content-Type ${JSON.stringify(mediaType)} is not documented (${Object.keys(content).join(', ')})`];
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      return [...problems, `the body is not JSON: ${response.body.slice(0, 100)}`];
    }
    const validate = this.validator(`${pointer}/content/${escapePointerSegment(mediaType)}/schema`);
    if (!validate(body))
      problems.push(`body ${JSON.stringify(body).slice(0, 300)}: ${this.ajv.errorsText(validate.errors, { dataVar: 'body' })}`);
    return problems;
  }

  /** A JSON Schema validator for the schema at a JSON Pointer into the document, e.g. `/components/schemas/Pet`. */
  validator(pointer: string): ValidateFunction {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi.json#${pointer}` });
      this.compiled.set(pointer, validate);
    }
    return validate;
  }

  private at(pointer: string): unknown {
    return pointer
      .split('/')
      .slice(1)
      .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((node, segment) => (node as Json | undefined)?.[segment], this.document);
  }

  /** Follows a local $ref (responses and headers may be components). */
  private resolve(node: Json): Json {
    const ref = node.$ref;
    return typeof ref === 'string' && ref.startsWith('#/') ? this.resolve(this.at(ref.slice(1)) as Json) : node;
  }
}

/** The validator of the committed document, shared by every test of a file. */
export const contract = new ContractValidator(committedDocument as Json);

/** The JSON bodies this test file checked, for the second validator after its tests. */
const checkedBodies: SchemaCase[] = [];

/** Fails (throws) when the response breaks the contract; reads a clone, so the body stays unread. */
export async function expectResponseToMatchContract(method: string, requestUrl: string, response: Response): Promise<void> {
  const body = await response.clone().text();
  const url = response.url || requestUrl;
  const problems = contract.violations(method, url, { status: response.status, headers: response.headers, body });
  if (problems.length > 0) throw new Error(`The response breaks the OpenAPI document:\n- ${problems.join('\n- ')}`);
  const pointer = contract.bodySchemaPointer(method, url, response.status, response.headers.get('content-type'));
  if (pointer)
    checkedBodies.push({
      pointer,
      value: JSON.parse(body),
      label: `${method.toUpperCase()} ${new URL(url).pathname} → ${response.status}`,
    });
}

// After the tests of a file that checked responses (every e2e file does, through test/support/api.ts).
afterAll(() => {
  if (checkedBodies.length === 0) return;
  const { failures } = validateWithSecondValidator(checkedBodies.splice(0));
  if (failures.length > 0) throw new Error(`The second JSON Schema validator refuses bodies the API sent:\n- ${failures.join('\n- ')}`);
});

/** A fetch that checks every response against the contract (for clients under test). */
export function contractCheckedFetch(fetchImpl: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const response = await fetchImpl(request);
    await expectResponseToMatchContract(request.method, request.url, response);
    return response;
  };
}

/** Header values are text; a header documented as an integer must be one, written in decimal. */
function headerValue(value: string, schema: Json): unknown {
  return schema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
}

function documentedHeaderNames(document: Json): string[] {
  const names: string[] = [];
  const visit = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'headers' && value && typeof value === 'object') names.push(...Object.keys(value).map((name) => name.toLowerCase()));
      visit(value);
    }
  };
  visit(document);
  return names;
}

/** The route's path as API Gateway matches it: a `{name}` is one non-empty path segment. */
function routePattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (/^\{\w+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}$`);
}

/** JSON Pointer escaping (RFC 6901). */
function escapePointerSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
