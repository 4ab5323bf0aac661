import httpJsonBodyParser from '@middy/http-json-body-parser';
import { ApiError } from '../../functions/domain/errors';
import { asBodyError, refuseRepeatedOrPrototypeMembers } from '../../functions/http/json-body';

/**
 * middy's JSON body parser, configured as the handler configures it
 * (functions/http/api-handler.ts), and what it throws answered as decision 12
 * answers it (functions/http/json-body.ts, asBodyError). Over HTTP, the same
 * answers are tested in test/e2e/hostile-input.test.ts.
 */
const parser = httpJsonBodyParser({ disableContentTypeCheck: true });

function parse(body: string, isBase64Encoded = false): unknown {
  const request = { event: { headers: {}, body, isBase64Encoded } };
  parser.before?.(request as never);
  return request.event.body;
}

function answerTo(body: string): { code: string; message: string } {
  try {
    parse(body);
  } catch (error) {
    const answered = asBodyError(error);
    expect(answered).toBeInstanceOf(ApiError);
    return { code: (answered as ApiError).code, message: (answered as ApiError).message };
  }
  throw new Error(`middy's parser read ${JSON.stringify(body)}`);
}

it('reads a JSON text as JSON.parse does, base64-encoded too (API Gateway sets isBase64Encoded for binary media types)', () => {
  const text = '{"name":"Rex \\u00e9","categoryId":1E2,"status":"sold"}';
  expect(parse(text)).toEqual(JSON.parse(text));
  expect(parse(Buffer.from(text).toString('base64'), true)).toEqual(JSON.parse(text));
});

it.each(['{"name":', '\uFEFF{"name":"x"}', 'undefined', "{'name':'x'}", '{"a":1,}'])(
  'a text that is not JSON (%j) is our 400 "not valid JSON", not middy\'s 422',
  (body) => {
    expect(answerTo(body)).toEqual({ code: 'invalid_request', message: 'The request body is not valid JSON.' });
  },
);

it('its forbidden key (a constructor holding a prototype) is an unknown field, named, as __proto__ is', () => {
  expect(answerTo('{"name":"x","categoryId":1,"constructor":{"prototype":{}}}')).toEqual({
    code: 'invalid_request',
    message: 'Unknown field in the request body: "constructor".',
  });
});

it('passes any other error on unchanged', () => {
  const other = Object.assign(new Error('Forbidden key in JSON body'), { statusCode: 422, cause: { package: '@middy/other' } });
  expect(asBodyError(other)).toBe(other);
  const plain = new TypeError('x');
  expect(asBodyError(plain)).toBe(plain);
});

describe('the member scan that runs before it (refuseRepeatedOrPrototypeMembers)', () => {
  const scanAnswer = (text: string) => {
    try {
      refuseRepeatedOrPrototypeMembers(text);
      return undefined;
    } catch (error) {
      return { code: (error as ApiError).code, message: (error as ApiError).message };
    }
  };

  it('lets a text without refused members through unparsed, JSON or not: the parser judges it', () => {
    for (const text of ['{"name":"x","categoryId":1}', '{"name":', '\uFEFF{}']) expect(scanAnswer(text)).toBeUndefined();
  });

  it('refuses a repeated or __proto__ member of valid JSON, naming it', () => {
    expect(scanAnswer('{"a":1,"a":2}')).toEqual({
      code: 'invalid_request',
      message: 'The request body names the field "a" more than once.',
    });
    expect(scanAnswer('[{"__proto__":1}]')).toEqual({
      code: 'invalid_request',
      message: 'Unknown field in the request body: "__proto__".',
    });
  });

  it.each(['{"a":1,"a":', '{["a"', '{"\\x":1}', '{"a":{"b":1,"b"'])(
    'answers a text that is not JSON (%j) as "not valid JSON", even where the scan sees a member or trips on it',
    (text) => {
      expect(scanAnswer(text)).toEqual({ code: 'invalid_request', message: 'The request body is not valid JSON.' });
    },
  );
});
