import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { awsCallsFromEnvironment } from '../../../functions/deployment-check/aws-calls';

/**
 * The check's three AWS calls as they leave the function: a local server in
 * place of the regional endpoints records what each request carries (the
 * JSON protocols' target header, the body, a Signature Version 4
 * Authorization of the right scope) and answers as AWS would.
 */
interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

async function withEndpoint(answer: (request: Received) => { status: number; body: unknown; headers?: Record<string, string> }) {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => {
      text += chunk;
    });
    request.on('end', () => {
      const got = { path: request.url ?? '', headers: request.headers, body: JSON.parse(text || 'null') };
      received.push(got);
      const reply = answer(got);
      response.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers });
      response.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const calls = awsCallsFromEnvironment({
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'secret',
    AWS_SESSION_TOKEN: 'session-token',
    AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`,
  });
  return { calls, received, close: () => new Promise((resolve) => server.close(resolve)) };
}

const scopeOf = (headers: IncomingMessage['headers']) =>
  /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/.exec(
    String(headers.authorization),
  );

it("Lambda's Invoke: the qualified ARN in the path, the event as the body; a function's error is read from X-Amz-Function-Error", async () => {
  const endpoint = await withEndpoint(({ body }) =>
    (body as { fail?: boolean }).fail
      ? { status: 200, body: { errorMessage: 'Unauthorized' }, headers: { 'X-Amz-Function-Error': 'Unhandled' } }
      : { status: 200, body: { statusCode: 200 } },
  );
  try {
    const arn = 'arn:aws:lambda:eu-west-1:123456789012:function:PetStore-Production-ListPets:7';
    expect(await endpoint.calls.invoke(arn, { ok: true })).toEqual({ functionError: undefined, payload: { statusCode: 200 } });
    expect(await endpoint.calls.invoke(arn, { fail: true })).toEqual({
      functionError: 'Unhandled',
      payload: { errorMessage: 'Unauthorized' },
    });
    const [first] = endpoint.received;
    expect(first!.path).toBe(`/2015-03-31/functions/${encodeURIComponent(arn)}/invocations`);
    expect(first!.body).toEqual({ ok: true });
    expect(scopeOf(first!.headers)?.slice(1)).toEqual(['eu-west-1', 'lambda']);
    expect(first!.headers['x-amz-security-token']).toBe('session-token');
  } finally {
    await endpoint.close();
  }
});

it("Secrets Manager's GetSecretValue and CodeDeploy's PutLifecycleEventHookExecutionStatus: JSON 1.1 with their targets", async () => {
  const endpoint = await withEndpoint(({ headers }) =>
    headers['x-amz-target'] === 'secretsmanager.GetSecretValue'
      ? { status: 200, body: { SecretString: 'abc' } }
      : { status: 200, body: {} },
  );
  try {
    expect(await endpoint.calls.secretString('arn:secret')).toBe('abc');
    await endpoint.calls.reportHookStatus('d-1', 'e-1', 'Failed');
    const [secret, report] = endpoint.received;
    expect(secret!.body).toEqual({ SecretId: 'arn:secret' });
    expect(scopeOf(secret!.headers)?.slice(1)).toEqual(['eu-west-1', 'secretsmanager']);
    expect(report!.headers['x-amz-target']).toBe('CodeDeploy_20141006.PutLifecycleEventHookExecutionStatus');
    expect(report!.headers['content-type']).toBe('application/x-amz-json-1.1');
    expect(report!.body).toEqual({ deploymentId: 'd-1', lifecycleEventHookExecutionId: 'e-1', status: 'Failed' });
    expect(scopeOf(report!.headers)?.slice(1)).toEqual(['eu-west-1', 'codedeploy']);
  } finally {
    await endpoint.close();
  }
});

it('an AWS error answer is an error naming the service (the check then reports Failed)', async () => {
  const endpoint = await withEndpoint(() => ({ status: 400, body: { __type: 'AccessDeniedException' } }));
  try {
    await expect(endpoint.calls.secretString('arn:secret')).rejects.toThrow(/secretsmanager \/ answered 400: .*AccessDeniedException/);
  } finally {
    await endpoint.close();
  }
});
