import type { APIGatewayAuthorizerResult, APIGatewayProxyResult } from 'aws-lambda';
import { type OperationId, type RouteDefinition, routes } from '../../definitions/routes';
import { authorizerEvent, type CheckRequest, checkOrder, checkRequests, proxyEvent } from './check-requests';

/** What Lambda's Invoke returned: the function's answer, or the error it ended with (X-Amz-Function-Error). */
export interface Invocation {
  functionError?: string;
  payload: unknown;
}

/** Calls one version of a function (a qualified ARN) with an event, as Lambda's Invoke API does. */
export type Invoke = (qualifiedArn: string, event: unknown) => Promise<Invocation>;

/** A function's new version (what the deployment brings) and its live alias (what clients are served now). */
export interface VersionPair {
  version: string;
  live: string;
}

export interface CheckTargets {
  authorizer: VersionPair;
  operations: Record<OperationId, VersionPair>;
}

/**
 * ok: the new version answered as it should. shared: it answered 503 (or
 * could not check the key), and so did the version in service: a dependency's
 * trouble, which the new version does not cause and which must not stop a fix
 * from deploying. failed: anything else.
 */
export type Verdict = 'ok' | 'shared' | 'failed';

export interface Finding {
  target: string;
  verdict: Verdict;
  detail: string;
}

export interface CheckReport {
  passed: boolean;
  findings: Finding[];
}

/**
 * Calls the new version of the authorizer (directly, so uncached) with the
 * check's key, then every operation's new version with the context it
 * returned, as API Gateway would. Passes when every call answered as it
 * should, or failed only as the live version fails too.
 */
export async function runDeploymentCheck(
  invoke: Invoke,
  targets: CheckTargets,
  secret: string,
  keyContext: Record<string, string>,
): Promise<CheckReport> {
  const findings: Finding[] = [];
  const authorization = await checkAuthorizer(invoke, targets.authorizer, secret);
  findings.push(authorization.finding);
  // Without the new authorizer's context (it failed), the operations still get called, with the context the key has.
  const context = authorization.context ?? keyContext;
  const createPetVersion = versionOf(targets.operations.createPet.version);
  let createdPetId: number | undefined;
  for (const operationId of checkOrder) {
    const route = routes.find((candidate) => candidate.operationId === operationId) as RouteDefinition;
    const request = checkRequests(createPetVersion, createdPetId)[operationId];
    const { finding, answer } = await checkOperation(invoke, route, targets.operations[operationId], request, context);
    findings.push(finding);
    if (operationId === 'createPet' && answer?.statusCode === 201) createdPetId = idOf(answer.body);
  }
  return { passed: findings.every((finding) => finding.verdict !== 'failed'), findings };
}

async function checkAuthorizer(
  invoke: Invoke,
  pair: VersionPair,
  secret: string,
): Promise<{ finding: Finding; context?: Record<string, string> }> {
  const event = authorizerEvent(secret, executeApiArnPrefix(pair.version));
  const answer = await invoke(pair.version, event);
  const target = `authorizer ${pair.version}`;
  if (!answer.functionError) {
    const result = answer.payload as APIGatewayAuthorizerResult;
    if (result.policyDocument?.Statement?.every((statement) => statement.Effect === 'Allow') && result.context) {
      return { finding: { target, verdict: 'ok', detail: 'allowed the check key' }, context: stringsOf(result.context) };
    }
    return { finding: { target, verdict: 'failed', detail: 'answered the valid check key with a Deny or no context' } };
  }
  if (errorMessageOf(answer) === 'Unauthorized') {
    return { finding: { target, verdict: 'failed', detail: 'refused the valid check key (401)' } };
  }
  const live = await invoke(pair.live, event);
  const liveFailsToo = live.functionError !== undefined && errorMessageOf(live) !== 'Unauthorized';
  return {
    finding: {
      target,
      verdict: liveFailsToo ? 'shared' : 'failed',
      detail: `could not check the key (${errorMessageOf(answer)}); the live version ${liveFailsToo ? 'fails the same way' : 'checks it'}`,
    },
  };
}

async function checkOperation(
  invoke: Invoke,
  route: RouteDefinition,
  pair: VersionPair,
  request: CheckRequest,
  context: Record<string, string>,
): Promise<{ finding: Finding; answer?: APIGatewayProxyResult }> {
  const event = proxyEvent(route, request, context);
  const target = `${route.operationId} ${pair.version}`;
  const answer = answerOf(await invoke(pair.version, event));
  const status = answer?.statusCode;
  if (status !== undefined && request.expected.includes(status)) {
    return { finding: { target, verdict: 'ok', detail: `answered ${status}` }, answer };
  }
  if (status !== 503) {
    return { finding: { target, verdict: 'failed', detail: answer ? `answered ${status}: ${answer.body}` : 'crashed (no answer)' } };
  }
  const liveStatus = answerOf(await invoke(pair.live, event))?.statusCode;
  return {
    finding: {
      target,
      verdict: liveStatus === 503 ? 'shared' : 'failed',
      detail: `answered 503; the live version answered ${liveStatus ?? 'nothing (crashed)'}`,
    },
  };
}

function answerOf(invocation: Invocation): APIGatewayProxyResult | undefined {
  if (invocation.functionError) return undefined;
  const answer = invocation.payload as Partial<APIGatewayProxyResult> | null;
  return typeof answer?.statusCode === 'number' ? (answer as APIGatewayProxyResult) : undefined;
}

function errorMessageOf(invocation: Invocation): string {
  const message = (invocation.payload as { errorMessage?: unknown } | null)?.errorMessage;
  return typeof message === 'string' ? message : String(invocation.functionError);
}

function idOf(body: string): number | undefined {
  try {
    const id = (JSON.parse(body) as { id?: unknown }).id;
    return typeof id === 'number' ? id : undefined;
  } catch {
    return undefined;
  }
}

function stringsOf(context: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(context).map(([name, value]) => [name, String(value)]));
}

/** arn:aws:lambda:region:account:function:name:version → version. */
export function versionOf(qualifiedArn: string): string {
  return qualifiedArn.split(':')[7] ?? '$LATEST';
}

/** An execute-api ARN prefix of the function's region and account, for the methodArn API Gateway would send. */
function executeApiArnPrefix(functionArn: string): string {
  const [, partition, , region, account] = functionArn.split(':');
  return `arn:${partition}:execute-api:${region}:${account}:deployment-check`;
}
