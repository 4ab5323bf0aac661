/**
 * The closed set of Error object codes. Every non-2xx body the API sends —
 * from our Lambda code or from API Gateway's gateway responses — uses one of
 * these codes, and its HTTP status comes from this table and nowhere else.
 */
export const errorCodes = {
  invalid_request: { status: 400, meaning: 'The request has a missing, malformed or invalid parameter, body field or cursor.' },
  unauthorized: { status: 401, meaning: 'The API key is missing, malformed, unknown or revoked.' },
  forbidden: { status: 403, meaning: 'The API key is valid but may not call this operation.' },
  not_found: { status: 404, meaning: 'No such pet, or no such route.' },
  request_in_progress: { status: 409, meaning: 'A request with the same Idempotency-Key is still being processed.' },
  gone: { status: 410, meaning: 'The operation passed its sunset date and was removed.' },
  payload_too_large: { status: 413, meaning: 'The request body is larger than 16 KiB.' },
  unsupported_media_type: { status: 415, meaning: 'The request body is not application/json.' },
  idempotency_key_reused: { status: 422, meaning: 'The Idempotency-Key was already used with a different request body.' },
  rate_limited: { status: 429, meaning: 'The per-minute request limit of the plan is used up; retry after Retry-After seconds.' },
  quota_exceeded: { status: 429, meaning: 'The per-day request quota of the plan is used up; retry after Retry-After seconds.' },
  key_suspended: {
    status: 429,
    meaning: 'The API key is temporarily suspended for calling on after 429s; retry after Retry-After seconds.',
  },
  internal_error: {
    status: 500,
    meaning:
      'An unexpected error. The message says whether the request may have taken effect: nothing was changed unless a write may have been sent.',
  },
  service_unavailable: {
    status: 503,
    meaning:
      'A dependency is unavailable or too slow, or the function could not be run; retry after Retry-After seconds. Nothing was changed unless the message says it is unknown whether the request took effect.',
  },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof errorCodes;

/** The Error object of the interface: `{ code, message, status }`. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  status: number;
}

export function errorBody(code: ErrorCode, message: string): ErrorBody {
  return { code, message, status: errorCodes[code].status };
}
