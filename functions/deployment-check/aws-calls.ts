import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Invocation } from './check';

/**
 * The three AWS calls of the check, signed with Signature Version 4 from the
 * function's role credentials (Lambda puts them in the environment). Plain
 * HTTPS instead of three more SDK clients in the bundle: one signer, JSON in
 * and out.
 */
export interface AwsCalls {
  invoke(qualifiedArn: string, event: unknown): Promise<Invocation>;
  secretString(secretId: string): Promise<string>;
  reportHookStatus(deploymentId: string, lifecycleEventHookExecutionId: string, status: 'Succeeded' | 'Failed'): Promise<void>;
}

/** node:crypto as the signer's hash (HMAC when given a secret). */
class Sha256 {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBuffer(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(toBuffer(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

function toBuffer(data: string | ArrayBuffer | ArrayBufferView): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return Buffer.from(data);
}

type SignedCall = (
  service: string,
  path: string,
  body: unknown,
  headers?: Record<string, string>,
) => Promise<{ text: string; functionError?: string }>;

/**
 * A signed JSON POST to a regional AWS endpoint (or to AWS_ENDPOINT_URL, which
 * the SDK honours the same way); a non-2xx answer is an error naming the service.
 */
function signedCaller(env: NodeJS.ProcessEnv): SignedCall {
  const region = env.AWS_REGION ?? 'us-east-1';
  const credentials = {
    accessKeyId: env.AWS_ACCESS_KEY_ID ?? '',
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? '',
    sessionToken: env.AWS_SESSION_TOKEN,
  };
  return async (service, path, body, headers = {}) => {
    const endpoint = new URL(env.AWS_ENDPOINT_URL ?? `https://${service}.${region}.amazonaws.com`);
    const hostname = endpoint.host;
    const signer = new SignatureV4({ service, region, credentials, sha256: Sha256 });
    const request = await signer.sign({
      method: 'POST',
      protocol: endpoint.protocol,
      hostname,
      path,
      headers: { host: hostname, 'content-type': 'application/x-amz-json-1.1', ...headers },
      body: JSON.stringify(body),
    });
    const response = await fetch(`${endpoint.protocol}//${hostname}${path}`, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${service} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
    return { text, functionError: response.headers.get('x-amz-function-error') ?? undefined };
  };
}

export function awsCallsFromEnvironment(env: NodeJS.ProcessEnv = process.env): AwsCalls {
  const call = signedCaller(env);
  return {
    // "Invoke", AWS Lambda API Reference, https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html:
    // a function's error comes back with status 200 and X-Amz-Function-Error.
    invoke: async (qualifiedArn, event) => {
      const { text, functionError } = await call('lambda', `/2015-03-31/functions/${encodeURIComponent(qualifiedArn)}/invocations`, event, {
        'content-type': 'application/json',
      });
      return { functionError, payload: text ? JSON.parse(text) : null };
    },
    // "GetSecretValue", AWS Secrets Manager API Reference, https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html
    secretString: async (secretId) => {
      const { text } = await call('secretsmanager', '/', { SecretId: secretId }, { 'x-amz-target': 'secretsmanager.GetSecretValue' });
      return String((JSON.parse(text) as { SecretString?: unknown }).SecretString ?? '');
    },
    // "PutLifecycleEventHookExecutionStatus", AWS CodeDeploy API Reference,
    // https://docs.aws.amazon.com/codedeploy/latest/APIReference/API_PutLifecycleEventHookExecutionStatus.html
    reportHookStatus: async (deploymentId, lifecycleEventHookExecutionId, status) => {
      await call(
        'codedeploy',
        '/',
        { deploymentId, lifecycleEventHookExecutionId, status },
        { 'x-amz-target': 'CodeDeploy_20141006.PutLifecycleEventHookExecutionStatus' },
      );
    },
  };
}
