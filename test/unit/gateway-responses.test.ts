import { errorCodes } from '../../definitions/error-codes';
import { type GatewayResponseType, gatewayResponse, gatewayResponses } from '../../definitions/gateway-responses';

describe('gateway responses', () => {
  it.each(Object.keys(gatewayResponses) as GatewayResponseType[])('%s is an Error object whose status matches its code', (type) => {
    const response = gatewayResponse(type);
    const body = JSON.parse(response.body);
    expect(body).toEqual({ code: expect.any(String), message: expect.any(String), status: response.statusCode });
    expect(errorCodes[body.code as keyof typeof errorCodes].status).toBe(response.statusCode);
    expect(response.headers['Content-Type']).toBe('application/json');
  });

  // What reaches INTEGRATION_FAILURE is mostly Lambda refusing to run the function (the account's
  // concurrency used up), timeouts, out-of-memory and init failures: our handlers answer their own
  // errors (definitions/gateway-responses.ts cites AWS). Waiting is the cure: 503 with Retry-After,
  // never a message that says nothing was changed (a function may fail after its write). A function
  // API Gateway stopped waiting for (INTEGRATION_TIMEOUT, 29 s) may still write: the same answer.
  it.each(['INTEGRATION_FAILURE', 'INTEGRATION_TIMEOUT'] as const)(
    'a function Lambda could not run, that failed or did not answer in time (%s) answers 503 service_unavailable with Retry-After, the outcome unknown',
    (type) => {
      const failure = gatewayResponse(type);
      expect(failure.statusCode).toBe(503);
      expect(JSON.parse(failure.body)).toMatchObject({ code: 'service_unavailable', status: 503 });
      expect(Number(failure.headers['Retry-After'])).toBeGreaterThan(0);
      expect(JSON.parse(failure.body).message).not.toMatch(/nothing was changed/i);
      expect(JSON.parse(failure.body).message).toMatch(/unknown whether the request took effect/);
    },
  );

  it('a 401 carries WWW-Authenticate: Bearer and a 429 or 503 carries Retry-After', () => {
    expect(gatewayResponse('UNAUTHORIZED').headers['WWW-Authenticate']).toBe('Bearer');
    for (const type of Object.keys(gatewayResponses) as GatewayResponseType[]) {
      const { statusCode, headers } = gatewayResponse(type);
      if (statusCode === 429 || statusCode === 503) expect(Number(headers['Retry-After'])).toBeGreaterThan(0);
    }
  });
});
