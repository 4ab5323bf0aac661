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

  // A crashed function (an unhandled error, a Lambda timeout, a malformed answer) or an invocation
  // Lambda refused is INTEGRATION_FAILURE, not DEFAULT_5XX: API Gateway's access logs name that type
  // with "Lambda Customer Function Error" (DataBiosphere/azul#6624,
  // https://github.com/DataBiosphere/azul/pull/6624), and AWS counts "all invocation and function
  // errors as internal errors" ("Handling Lambda errors with an API Gateway API",
  // https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html). Our handlers answer
  // every expected failure, a dependency's with 503, so a crash is a bug: 500, not a 503 to retry.
  it('a crashed function (INTEGRATION_FAILURE) answers 500 internal_error, as DEFAULT_5XX does, with no Retry-After', () => {
    const crash = gatewayResponse('INTEGRATION_FAILURE');
    expect(crash.statusCode).toBe(500);
    expect(JSON.parse(crash.body)).toMatchObject({ code: 'internal_error', status: 500 });
    expect(crash.headers['Retry-After']).toBeUndefined();
    expect(crash).toEqual(gatewayResponse('DEFAULT_5XX'));
  });

  it('a 401 carries WWW-Authenticate: Bearer and a 429 or 503 carries Retry-After', () => {
    expect(gatewayResponse('UNAUTHORIZED').headers['WWW-Authenticate']).toBe('Bearer');
    for (const type of Object.keys(gatewayResponses) as GatewayResponseType[]) {
      const { statusCode, headers } = gatewayResponse(type);
      if (statusCode === 429 || statusCode === 503) expect(Number(headers['Retry-After'])).toBeGreaterThan(0);
    }
  });
});
