import * as fs from 'node:fs';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { businessMetrics } from '../../definitions/metrics';
import { accessLogClass, functionLogging, xraySampling } from '../../definitions/observability';
import { createHandler as createPetHandler } from '../../functions/create-pet/handler';
import { createHandler as listPetsHandler } from '../../functions/list-pets/handler';
import type { Dependencies } from '../../functions/runtime/dependencies';
import { assumptions } from '../../scripts/capacity-model';
import { answerLineBytes, logBytesPerRequest, renderAccessLogLine, sampleAccessLogValues, sampleRequest } from '../../scripts/cost-model';
import { lambdaContext, restProxyEvent } from '../support/api-gateway-events';
import { createTestTables, testDependencies } from '../support/dynamo';
import { setEnvironment } from '../support/process-environment';
import { type Json, synthesizeProductionTemplate } from '../support/production-template';

/**
 * The bill's log bytes (scripts/cost-model.ts, logBytesPerRequest) against what
 * a request really leaves: the real listPets handler on DynamoDB Local, run as
 * Lambda runs it in production (metrics on, the function's name and version in
 * the environment), its stdout and stderr counted; and the production stage's
 * access-log format, as `cdk synth` writes it, filled in for that request. The
 * stack settings the bill relies on are read from the same template.
 */

const customer = {
  keyId: 'key_logbytes00000001',
  customerId: 'key_logbytes00000001',
  plan: 'enterprise',
  perMinute: '100000',
  perDay: '10000000',
};
let template: Json;
let outdir: string;
let dependencies: Dependencies;
let restoreEnvironment: () => void;

beforeAll(async () => {
  ({ template, outdir } = synthesizeProductionTemplate('petstore-log-bytes-'));
  // As in Lambda: Powertools' default level (the tests' setup silences it), metrics on.
  const lambdaEnvironment = {
    POWERTOOLS_LOG_LEVEL: 'INFO',
    POWERTOOLS_METRICS_DISABLED: 'false',
    PETSTORE_STAGE: 'production',
    [businessMetrics.functionEnvVar]: sampleRequest.functionName,
    AWS_LAMBDA_FUNCTION_VERSION: sampleRequest.version,
  };
  restoreEnvironment = setEnvironment(lambdaEnvironment);
  dependencies = testDependencies(await createTestTables());
  // A list that fills a page, created outside the requests counted.
  const create = createPetHandler(dependencies);
  await written(async () => {
    for (let i = 0; i < 21; i++) await create(petEvent(i), lambdaContext('createPet'));
  });
}, 120_000);

afterAll(() => {
  restoreEnvironment?.();
  fs.rmSync(outdir, { recursive: true, force: true });
});

const petEvent = (i: number) =>
  restProxyEvent({
    method: 'POST',
    resource: '/pets',
    path: '/pets',
    body: JSON.stringify({ name: `log-bytes ${i}`, categoryId: 1 }),
    headers: { 'Content-Type': 'application/json' },
    authorizer: customer,
  });
const listEvent = (query?: Record<string, string>) =>
  restProxyEvent({ method: 'GET', resource: '/pets', path: '/pets', query, authorizer: customer });

/** Every line `run` writes on stdout and stderr (Lambda sends both to the function's log group). */
async function written<T>(run: () => Promise<T>): Promise<{ result: T; lines: string[] }> {
  const chunks: string[] = [];
  const capture = (chunk: unknown) => {
    chunks.push(String(chunk));
    return true;
  };
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
  const err = jest.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    const result = await run();
    return { result, lines: chunks.join('').split('\n').filter(Boolean) };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/** Bytes of lines as written, each with its newline. */
const bytesOf = (lines: string[]) => lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);

/**
 * The access log's line API Gateway writes for `event` answered with `status`
 * after `latencyMs`, in the stage's format. The extended request id keeps the
 * bill's value: the test events' are shorter than API Gateway's.
 */
function accessLogLine(event: APIGatewayProxyEvent, status: number, latencyMs: number): string {
  const stage = Object.values(template.Resources as Json).find((resource) => resource.Type === 'AWS::ApiGateway::Stage');
  return renderAccessLogLine(stage.Properties.AccessLogSetting.Format as string, {
    ...sampleAccessLogValues,
    '$context.requestId': event.requestContext.requestId,
    '$context.identity.sourceIp': event.requestContext.identity.sourceIp,
    '$context.httpMethod': event.httpMethod,
    '$context.resourcePath': event.resource,
    '$context.status': String(status),
    '$context.responseLatency': String(latencyMs),
    '$context.authorizer.principalId': customer.keyId,
  });
}

it('a listPets page leaves in CloudWatch Logs the bytes the bill charges: its metric line and its access-log line', async () => {
  const event = listEvent();
  const startedAt = Date.now();
  const { result, lines } = await written(() => listPetsHandler(dependencies)(event, lambdaContext('listPets')));
  const answer = result as APIGatewayProxyResult;
  expect(answer.statusCode).toBe(200);
  expect(JSON.parse(answer.body)).toHaveLength(20);

  // One line, the canary's metric line: no request line for a success.
  expect(lines).toHaveLength(1);
  const metricLine = JSON.parse(lines[0]!) as Json;
  expect(metricLine).toMatchObject({ function: sampleRequest.functionName, version: sampleRequest.version });
  // The stack gives the listPets function the short name the bill's line carries.
  const functions = Object.values(template.Resources as Json).filter((resource) => resource.Type === 'AWS::Lambda::Function');
  expect(functions.map((fn) => fn.Properties.Environment?.Variables?.[businessMetrics.functionEnvVar])).toContain(
    sampleRequest.functionName,
  );
  expect(metricLine.AnswerLatency).toEqual(expect.any(Number));
  // The same line with the bill's latency (its digits are the only part that moves from run to run).
  const asBilled = JSON.stringify({ ...metricLine, AnswerLatency: sampleRequest.latencyMs });
  expect(bytesOf([asBilled])).toBe(answerLineBytes());
  expect(Math.abs(bytesOf(lines) - answerLineBytes())).toBeLessThanOrEqual(2);

  const accessLine = accessLogLine(event, answer.statusCode, Date.now() - startedAt);
  expect(JSON.parse(accessLine)).toMatchObject({ requestId: event.requestContext.requestId, status: '200', principalId: customer.keyId });
  const accessAsBilled = accessLogLine(event, answer.statusCode, Number(sampleAccessLogValues['$context.responseLatency']));
  expect(bytesOf([accessAsBilled])).toBe(logBytesPerRequest().accessLog);
});

it("a created pet leaves one line too: the canary's, which also counts PetsCreated (the bill's create share)", async () => {
  const { result, lines } = await written(() => createPetHandler(dependencies)(petEvent(99), lambdaContext('createPet')));
  expect((result as APIGatewayProxyResult).statusCode).toBe(201);
  expect(lines).toHaveLength(1);
  const metricLine = JSON.parse(lines[0]!) as Json;
  expect(metricLine).toMatchObject({ function: sampleRequest.functionName, version: sampleRequest.version, PetsCreated: 1 });
  // With the bill's latency, as above.
  expect(bytesOf([JSON.stringify({ ...metricLine, AnswerLatency: sampleRequest.latencyMs })])).toBe(answerLineBytes(true));
  const { mix } = assumptions;
  expect(logBytesPerRequest().functionLogs).toBeCloseTo((1 - mix.createPet) * answerLineBytes() + mix.createPet * answerLineBytes(true), 6);
});

it('an answer of 400 or more also writes the request line, with the request id the access log carries', async () => {
  const event = listEvent({ limit: '0' });
  const { result, lines } = await written(() => listPetsHandler(dependencies)(event, lambdaContext('listPets')));
  expect((result as APIGatewayProxyResult).statusCode).toBe(400);
  const parsed = lines.map((line) => JSON.parse(line) as Json);
  const requestLine = parsed.find((line) => line.message === 'request');
  expect(requestLine).toMatchObject({
    level: 'INFO',
    operation: 'listPets',
    requestId: event.requestContext.requestId,
    extendedRequestId: event.requestContext.extendedRequestId,
    keyId: customer.keyId,
    statusCode: 400,
  });
  // An operator finds it from the access log's line of the same request.
  expect(JSON.parse(accessLogLine(event, 400, 5)).requestId).toBe(requestLine?.requestId);
  // The canary's line is written for it too; the bill counts successes only.
  expect(parsed.filter((line) => line._aws?.CloudWatchMetrics?.[0]?.Metrics?.[0]?.Name === 'AnswerLatency')).toHaveLength(1);
  expect(bytesOf(lines)).toBeGreaterThan(logBytesPerRequest().functionLogs);
});

describe('the stack writes what the bill charges', () => {
  const resources = () => Object.values(template.Resources as Json);

  it("every function logs JSON at INFO and Lambda's own lines at WARN: no START or REPORT line per request", () => {
    const functions = resources().filter((resource) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.Runtime);
    expect(functions.length).toBeGreaterThanOrEqual(4);
    for (const fn of functions) {
      expect(fn.Properties.LoggingConfig).toMatchObject({
        LogFormat: functionLogging.format,
        ApplicationLogLevel: functionLogging.applicationLogLevel,
        SystemLogLevel: functionLogging.systemLogLevel,
      });
    }
  });

  it('the access log group has the class the bill charges; the function log groups, whose metric lines become the alarms, Standard', () => {
    const stage = resources().find((resource) => resource.Type === 'AWS::ApiGateway::Stage');
    const accessLogGroup = template.Resources[stage.Properties.AccessLogSetting.DestinationArn['Fn::GetAtt'][0]];
    expect(accessLogGroup.Properties.LogGroupClass).toBe(accessLogClass);
    const functions = resources().filter((resource) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.LoggingConfig);
    for (const fn of functions) {
      expect(template.Resources[fn.Properties.LoggingConfig.LogGroup.Ref].Properties.LogGroupClass ?? 'STANDARD').toBe('STANDARD');
    }
  });

  it("X-Ray samples the stage by the bill's rule", () => {
    const rules = resources().filter((resource) => resource.Type === 'AWS::XRay::SamplingRule');
    expect(rules).toHaveLength(1);
    expect(rules[0].Properties.SamplingRule).toMatchObject({
      ServiceName: 'petstore-production/v1',
      ServiceType: 'AWS::ApiGateway::Stage',
      ReservoirSize: xraySampling.reservoirPerSecond,
      FixedRate: xraySampling.fixedRate,
    });
  });
});
