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

  it('a 401 carries WWW-Authenticate: Bearer and a 429 or 503 carries Retry-After', () => {
    expect(gatewayResponse('UNAUTHORIZED').headers['WWW-Authenticate']).toBe('Bearer');
    for (const type of Object.keys(gatewayResponses) as GatewayResponseType[]) {
      const { statusCode, headers } = gatewayResponse(type);
      if (statusCode === 429 || statusCode === 503) expect(Number(headers['Retry-After'])).toBeGreaterThan(0);
    }
  });
});
