// Generated from openapi/openapi.json by `npm run openapi` (openapi-typescript). Do not edit.
export interface paths {
    "/pets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List pets in ascending id order, optionally filtered by status.
         * @description Pets in ascending id order, at most `limit` (default 20, at most 100) a page, optionally only those in one `status`. Unknown query parameters are ignored; a parameter sent twice (`limit=1&limit=2`) is a 400 naming it.
         *
         *     When more pets exist, the response carries the next page twice: `Link: <absolute URL of the next page>; rel="next"` (RFC 8288), to follow as it is, and `X-Next-Cursor`, the opaque cursor of that page, for clients that build requests from parameters: send it as `cursor` with the same `status` (and `limit`). The body stays a JSON array. Page until a response comes without them. A malformed or altered cursor, one holding a value the service could not have issued, or one used with another `status` than the one it was made for, is a 400 naming `cursor`.
         *
         *     In AWS, a pet just created may take a moment to appear in lists (they read an eventually consistent index).
         */
        get: operations["listPets"];
        put?: never;
        /**
         * Add a pet.
         * @description Adds a pet; the service assigns its id. The body must be declared as JSON (`application/json`, or `application/*+json`, any parameters, any case: else 415), at most 16 KiB (else 413), and valid (else 400). Invalid input never changes anything. The 201 carries the pet and its URL in `Location`.
         *
         *     **Idempotent retries.** Send an `Idempotency-Key` (IETF httpapi draft; e.g. a random UUID in quotes) to make a retry safe: the same key with the same body returns the original 201 and creates nothing; the same key with another body is a 422 `idempotency_key_reused`; a duplicate sent while the first is still in flight is a 409 `request_in_progress` (retry after Retry-After). Keys are remembered per API key for 24 hours. A refused request (4xx) is not remembered.
         */
        post: operations["createPet"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/pets/{petId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get one pet by id (deprecated: use GET /pets).
         * @deprecated
         * @description **Deprecated** since 2026-01-01; removed on 2030-12-05 (Sunset: Thu, 05 Dec 2030 00:00:00 GMT). Use `GET /pets` with the `status` filter instead. Every response of this operation's function carries `Deprecation` (RFC 9745), `Sunset` (RFC 8594) and `Link: <…/pets>; rel="successor-version"`; the answers API Gateway gives by itself (a 401 for a missing or refused key, its own 429 and 5xx) and the edge (a 413 for a body over 16 KiB) do not. From the sunset instant on it answers 410 `gone`.
         *
         *     One pet by its id. `petId` is a plain decimal integer from 1 to 2^53−1 (`abc`, `0`, `01`, `-1`, `1.5` are a 400); a well-formed id with no pet is a 404.
         */
        get: operations["getPet"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * @description The state of a pet. `available` when none is sent at creation.
         * @enum {string}
         */
        PetStatus: "available" | "pending" | "sold";
        /**
         * @description The creation payload. Any other field, `id` included, is refused with 400.
         * @example {
         *       "name": "Rex",
         *       "categoryId": 1
         *     }
         */
        NewPet: {
            /** @description The pet's name: 1 to 100 characters (Unicode code points), at least one of them visible (not whitespace, a format character or one Unicode marks as ignorable in display, such as zero-width characters; a private-use character or a code point not yet assigned counts as visible); no control characters, bidirectional override or isolate controls, or noncharacters; well-formed Unicode. The pattern states these rules for the Basic Multilingual Plane only; beyond it the server also refuses invisible characters and noncharacters (such as the tag characters U+E0000–U+E0FFF and U+1FFFE), and a lone surrogate (category Cs), with 400: rules a portable pattern cannot state. */
            name: string;
            /**
             * Format: int64
             * @description The category of the pet. An integer: the string "1" is refused.
             */
            categoryId: number;
            /** @default available */
            status?: components["schemas"]["PetStatus"];
        };
        /**
         * @description An animal of the catalogue: the creation payload plus the id the service assigned.
         * @example {
         *       "id": 1,
         *       "name": "Rex",
         *       "categoryId": 1,
         *       "status": "available"
         *     }
         */
        Pet: {
            /**
             * Format: int64
             * @description Assigned by the service: unique, never reused, roughly increasing, not contiguous; from 1 to 9007199254740991 (2^53−1, exact in any JSON client).
             */
            id: number;
            /** @description The pet's name: 1 to 100 characters (Unicode code points), at least one of them visible (not whitespace, a format character or one Unicode marks as ignorable in display, such as zero-width characters; a private-use character or a code point not yet assigned counts as visible); no control characters, bidirectional override or isolate controls, or noncharacters; well-formed Unicode. The pattern states these rules for the Basic Multilingual Plane only; beyond it the server also refuses invisible characters and noncharacters (such as the tag characters U+E0000–U+E0FFF and U+1FFFE), and a lone surrogate (category Cs), with 400: rules a portable pattern cannot state. */
            name: string;
            /**
             * Format: int64
             * @description The category of the pet. An integer: the string "1" is refused.
             */
            categoryId: number;
            status: components["schemas"]["PetStatus"];
        };
        /**
         * @description Every error, from the functions and from API Gateway alike. `code` is one of a closed set; `status` repeats the HTTP status; `message` is for people and never reveals internals.
         *
         *     | code | status | meaning |
         *     |---|---|---|
         *     | `invalid_request` | 400 | The request has a missing, malformed or invalid parameter, body field or cursor. |
         *     | `unauthorized` | 401 | The API key is missing, malformed, unknown or revoked. |
         *     | `forbidden` | 403 | The API key is valid but may not call this operation. Reserved: API Gateway's answer to a request its configuration refuses; no operation of this API answers 403 today. |
         *     | `not_found` | 404 | No such pet, or no such route. |
         *     | `request_in_progress` | 409 | A request with the same Idempotency-Key is still being processed. |
         *     | `gone` | 410 | The operation passed its sunset date and was removed. |
         *     | `payload_too_large` | 413 | The request body is larger than 16 KiB. |
         *     | `unsupported_media_type` | 415 | The request body is not application/json. |
         *     | `idempotency_key_reused` | 422 | The Idempotency-Key was already used with a different request body. |
         *     | `rate_limited` | 429 | The per-minute request limit of the plan is used up; retry after Retry-After seconds. |
         *     | `quota_exceeded` | 429 | The per-day request quota of the plan is used up; retry after Retry-After seconds. |
         *     | `key_suspended` | 429 | The API key is temporarily suspended for calling on after 429s; retry after Retry-After seconds. |
         *     | `internal_error` | 500 | An unexpected error. The message says whether the request may have taken effect: nothing was changed unless a write may have been sent. |
         *     | `service_unavailable` | 503 | A dependency is unavailable or too slow, or the function could not be run; retry after Retry-After seconds. Nothing was changed unless the message says it is unknown whether the request took effect. |
         * @example {
         *       "code": "not_found",
         *       "message": "No pet has the id 42.",
         *       "status": 404
         *     }
         */
        ErrorObject: {
            /**
             * @description Machine-readable; one of the closed set in the table above.
             * @enum {string}
             */
            code: "invalid_request" | "unauthorized" | "forbidden" | "not_found" | "request_in_progress" | "gone" | "payload_too_large" | "unsupported_media_type" | "idempotency_key_reused" | "rate_limited" | "quota_exceeded" | "key_suspended" | "internal_error" | "service_unavailable";
            /** @description Human-readable; may change at any time. */
            message: string;
            /**
             * @description The HTTP status code of the response.
             * @enum {integer}
             */
            status: 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 422 | 429 | 500 | 503;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listPets: {
        parameters: {
            query?: {
                /** @description How many pets a page holds at most: a plain decimal integer from 1 to 100, without sign or leading zero (`020` is a 400); 20 when not sent. */
                limit?: number;
                /** @description Only pets in this state. */
                status?: components["schemas"]["PetStatus"];
                /** @description Opaque: never build it, copy it from the `Link: rel="next"` URL (best: follow that URL as it is). Valid only with the `status` it was made for. */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of pets, in ascending id order. */
            200: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining": number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset": number;
                    /** @description Present when more pets exist: the absolute URL of the next page (RFC 8288). Follow it as it is. */
                    Link?: string;
                    /** @description Present when more pets exist (with `Link`): the opaque cursor of the next page. Send it as the `cursor` query parameter, with the same `status` and `limit`. */
                    "X-Next-Cursor"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"][];
                };
            };
            /** @description `invalid_request`. A parameter, header or body field is missing, malformed or invalid; the message names it. Nothing was changed. */
            400: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining": number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "invalid_request";
                        /** @constant */
                        status?: 400;
                    };
                };
            };
            /** @description `unauthorized`. The API key is missing, empty, malformed, unknown or revoked, or a rotated key is past its grace period. Answered by API Gateway, without rate-limit or deprecation headers; or, for a key revoked or past its grace since the gateway cached its check, by the function of the operation at the next request of the key, without rate-limit headers. A key suspended for calling on after its 429s gets 429 `key_suspended`, not 401. */
            401: {
                headers: {
                    /** @description The authentication scheme to use (RFC 6750). */
                    "WWW-Authenticate": "Bearer";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "unauthorized";
                        /** @constant */
                        status?: 401;
                    };
                };
            };
            /** @description `payload_too_large`. The request has a body over 16 KiB: refused at the edge (AWS WAF) before the key is checked, without rate-limit headers. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "payload_too_large";
                        /** @constant */
                        status?: 413;
                    };
                };
            };
            /** @description `rate_limited`, `quota_exceeded`, `key_suspended`. `rate_limited`: the minute's limit is used up; `quota_exceeded`: the day's quota is used up (Retry-After reaches to 00:00 UTC); `key_suspended`: the key kept calling after its 429s and is suspended for 15 minutes. A refused request consumes nothing. Wait Retry-After seconds before the next request. Our limiter always sends the rate-limit headers; a 429 from a backstop in front of it (API Gateway's usage-plan or stage throttling, or a per-IP firewall rule where a stage enables one) carries only Retry-After. */
            429: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset"?: number;
                    /** @description Seconds to wait before sending another request (never less). */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @enum {unknown} */
                        code?: "rate_limited" | "quota_exceeded" | "key_suspended";
                        /** @constant */
                        status?: 429;
                    };
                };
            };
            /** @description `internal_error`. An unexpected error. Its message says "nothing was changed" only when no write was sent; otherwise it is unknown whether the request took effect (a retry with the same Idempotency-Key takes effect at most once). Answered by the function (with rate-limit headers once the request was counted) or by API Gateway (without). */
            500: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "internal_error";
                        /** @constant */
                        status?: 500;
                    };
                };
            };
            /** @description `service_unavailable`. A dependency is unavailable or too slow, or Lambda could not run the function (API Gateway's answer, without rate-limit headers). Retry after Retry-After. Nothing was changed unless the message says it is unknown whether the request took effect (a retry with the same Idempotency-Key takes effect at most once). A function's 503 may lack the rate-limit headers too, when the counters could not be read. */
            503: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset"?: number;
                    /** @description Seconds to wait before sending another request (never less). */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "service_unavailable";
                        /** @constant */
                        status?: 503;
                    };
                };
            };
        };
    };
    createPet: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description Makes a retried create safe: 1 to 255 visible ASCII characters (`!` to `~`, U+0021–U+007E: no space, tab or other control character), as a structured-field string (in quotes, then without `"` or `\` inside) or a bare token. Remembered per API key for 24 hours.
                 * @example "8e03978e-40d5-43e8-bc93-6894a57f9324"
                 */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The pet to add, as JSON: `application/json` or any `application/*+json` type, at most 16 KiB. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["NewPet"];
                "application/*+json": components["schemas"]["NewPet"];
            };
        };
        responses: {
            /** @description The pet, created (or, for a replayed Idempotency-Key, the pet first created). */
            201: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining": number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset": number;
                    /** @description The absolute URL of the pet (RFC 9110, section 15.3.2): the stage URL followed by `/pets/{id}`. */
                    Location: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            /** @description `invalid_request`. A parameter, header or body field is missing, malformed or invalid; the message names it. Nothing was changed. */
            400: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining": number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "invalid_request";
                        /** @constant */
                        status?: 400;
                    };
                };
            };
            /** @description `unauthorized`. The API key is missing, empty, malformed, unknown or revoked, or a rotated key is past its grace period. Answered by API Gateway, without rate-limit or deprecation headers; or, for a key revoked or past its grace since the gateway cached its check, by the function of the operation at the next request of the key, without rate-limit headers. A key suspended for calling on after its 429s gets 429 `key_suspended`, not 401. */
            401: {
                headers: {
                    /** @description The authentication scheme to use (RFC 6750). */
                    "WWW-Authenticate": "Bearer";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "unauthorized";
                        /** @constant */
                        status?: 401;
                    };
                };
            };
            /** @description `request_in_progress`. A request with the same Idempotency-Key is still in flight. Retry after Retry-After: the retry gets the original 201. */
            409: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining": number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset": number;
                    /** @description Seconds to wait before sending another request (never less). */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "request_in_progress";
                        /** @constant */
                        status?: 409;
                    };
                };
            };
            /** @description `payload_too_large`. The body is over 16 KiB. A body over 16 KiB is refused at the edge (AWS WAF) before the key is checked, without rate-limit headers. */
            413: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "payload_too_large";
                        /** @constant */
                        status?: 413;
                    };
                };
            };
            /** @description `unsupported_media_type`. The body is not declared as JSON. */
            415: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining": number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "unsupported_media_type";
                        /** @constant */
                        status?: 415;
                    };
                };
            };
            /** @description `idempotency_key_reused`. The Idempotency-Key was already used with a different body. Use a new key for a new pet. */
            422: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining": number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "idempotency_key_reused";
                        /** @constant */
                        status?: 422;
                    };
                };
            };
            /** @description `rate_limited`, `quota_exceeded`, `key_suspended`. `rate_limited`: the minute's limit is used up; `quota_exceeded`: the day's quota is used up (Retry-After reaches to 00:00 UTC); `key_suspended`: the key kept calling after its 429s and is suspended for 15 minutes. A refused request consumes nothing. Wait Retry-After seconds before the next request. Our limiter always sends the rate-limit headers; a 429 from a backstop in front of it (API Gateway's usage-plan or stage throttling, or a per-IP firewall rule where a stage enables one) carries only Retry-After. */
            429: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset"?: number;
                    /** @description Seconds to wait before sending another request (never less). */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @enum {unknown} */
                        code?: "rate_limited" | "quota_exceeded" | "key_suspended";
                        /** @constant */
                        status?: 429;
                    };
                };
            };
            /** @description `internal_error`. An unexpected error. Its message says "nothing was changed" only when no write was sent; otherwise it is unknown whether the request took effect (a retry with the same Idempotency-Key takes effect at most once). Answered by the function (with rate-limit headers once the request was counted) or by API Gateway (without). */
            500: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "internal_error";
                        /** @constant */
                        status?: 500;
                    };
                };
            };
            /** @description `service_unavailable`. A dependency is unavailable or too slow, or Lambda could not run the function (API Gateway's answer, without rate-limit headers). Retry after Retry-After. Nothing was changed unless the message says it is unknown whether the request took effect (a retry with the same Idempotency-Key takes effect at most once). A function's 503 may lack the rate-limit headers too, when the counters could not be read. */
            503: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset"?: number;
                    /** @description Seconds to wait before sending another request (never less). */
                    "Retry-After": number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "service_unavailable";
                        /** @constant */
                        status?: 503;
                    };
                };
            };
        };
    };
    getPet: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The id of the pet: a plain decimal integer. */
                petId: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The pet. */
            200: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining": number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset": number;
                    /** @description RFC 9745: deprecated since 2026-01-01T00:00:00Z. */
                    Deprecation: "@1767225600";
                    /** @description RFC 8594: when the operation stops working; from then on it answers 410. */
                    Sunset: "Thu, 05 Dec 2030 00:00:00 GMT";
                    /** @description The replacement, `GET /pets`, as an absolute URL. */
                    Link: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Pet"];
                };
            };
            /** @description `invalid_request`. A parameter, header or body field is missing, malformed or invalid; the message names it. Nothing was changed. */
            400: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining": number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset": number;
                    /** @description RFC 9745: deprecated since 2026-01-01T00:00:00Z. */
                    Deprecation: "@1767225600";
                    /** @description RFC 8594: when the operation stops working; from then on it answers 410. */
                    Sunset: "Thu, 05 Dec 2030 00:00:00 GMT";
                    /** @description The replacement, `GET /pets`, as an absolute URL. */
                    Link: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "invalid_request";
                        /** @constant */
                        status?: 400;
                    };
                };
            };
            /** @description `unauthorized`. The API key is missing, empty, malformed, unknown or revoked, or a rotated key is past its grace period. Answered by API Gateway, without rate-limit or deprecation headers; or, for a key revoked or past its grace since the gateway cached its check, by the function of the operation at the next request of the key, without rate-limit headers. A key suspended for calling on after its 429s gets 429 `key_suspended`, not 401. */
            401: {
                headers: {
                    /** @description The authentication scheme to use (RFC 6750). */
                    "WWW-Authenticate": "Bearer";
                    /** @description RFC 9745: deprecated since 2026-01-01T00:00:00Z. */
                    Deprecation?: "@1767225600";
                    /** @description RFC 8594: when the operation stops working; from then on it answers 410. */
                    Sunset?: "Thu, 05 Dec 2030 00:00:00 GMT";
                    /** @description The replacement, `GET /pets`, as an absolute URL. */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "unauthorized";
                        /** @constant */
                        status?: 401;
                    };
                };
            };
            /** @description `not_found`. No pet has this id. */
            404: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining": number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset": number;
                    /** @description RFC 9745: deprecated since 2026-01-01T00:00:00Z. */
                    Deprecation: "@1767225600";
                    /** @description RFC 8594: when the operation stops working; from then on it answers 410. */
                    Sunset: "Thu, 05 Dec 2030 00:00:00 GMT";
                    /** @description The replacement, `GET /pets`, as an absolute URL. */
                    Link: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "not_found";
                        /** @constant */
                        status?: 404;
                    };
                };
            };
            /** @description `gone`. The operation is past its sunset. */
            410: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit": number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining": number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset": number;
                    /** @description RFC 9745: deprecated since 2026-01-01T00:00:00Z. */
                    Deprecation: "@1767225600";
                    /** @description RFC 8594: when the operation stops working; from then on it answers 410. */
                    Sunset: "Thu, 05 Dec 2030 00:00:00 GMT";
                    /** @description The replacement, `GET /pets`, as an absolute URL. */
                    Link: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "gone";
                        /** @constant */
                        status?: 410;
                    };
                };
            };
            /** @description `payload_too_large`. The request has a body over 16 KiB: refused at the edge (AWS WAF) before the key is checked, without rate-limit headers. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "payload_too_large";
                        /** @constant */
                        status?: 413;
                    };
                };
            };
            /** @description `rate_limited`, `quota_exceeded`, `key_suspended`. `rate_limited`: the minute's limit is used up; `quota_exceeded`: the day's quota is used up (Retry-After reaches to 00:00 UTC); `key_suspended`: the key kept calling after its 429s and is suspended for 15 minutes. A refused request consumes nothing. Wait Retry-After seconds before the next request. Our limiter always sends the rate-limit headers; a 429 from a backstop in front of it (API Gateway's usage-plan or stage throttling, or a per-IP firewall rule where a stage enables one) carries only Retry-After. */
            429: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset"?: number;
                    /** @description Seconds to wait before sending another request (never less). */
                    "Retry-After": number;
                    /** @description RFC 9745: deprecated since 2026-01-01T00:00:00Z. */
                    Deprecation?: "@1767225600";
                    /** @description RFC 8594: when the operation stops working; from then on it answers 410. */
                    Sunset?: "Thu, 05 Dec 2030 00:00:00 GMT";
                    /** @description The replacement, `GET /pets`, as an absolute URL. */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @enum {unknown} */
                        code?: "rate_limited" | "quota_exceeded" | "key_suspended";
                        /** @constant */
                        status?: 429;
                    };
                };
            };
            /** @description `internal_error`. An unexpected error. Its message says "nothing was changed" only when no write was sent; otherwise it is unknown whether the request took effect (a retry with the same Idempotency-Key takes effect at most once). Answered by the function (with rate-limit headers once the request was counted) or by API Gateway (without). */
            500: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset"?: number;
                    /** @description RFC 9745: deprecated since 2026-01-01T00:00:00Z. */
                    Deprecation?: "@1767225600";
                    /** @description RFC 8594: when the operation stops working; from then on it answers 410. */
                    Sunset?: "Thu, 05 Dec 2030 00:00:00 GMT";
                    /** @description The replacement, `GET /pets`, as an absolute URL. */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "internal_error";
                        /** @constant */
                        status?: 500;
                    };
                };
            };
            /** @description `service_unavailable`. A dependency is unavailable or too slow, or Lambda could not run the function (API Gateway's answer, without rate-limit headers). Retry after Retry-After. Nothing was changed unless the message says it is unknown whether the request took effect (a retry with the same Idempotency-Key takes effect at most once). A function's 503 may lack the rate-limit headers too, when the counters could not be read. */
            503: {
                headers: {
                    /** @description The limit of the window closest to exhaustion: the minute's, or the day's once fewer requests are left in the day than in the minute. */
                    "X-RateLimit-Limit"?: number;
                    /** @description Requests left in that window after this one. */
                    "X-RateLimit-Remaining"?: number;
                    /** @description Unix time (seconds) at which that window ends (for a suspended key: when the suspension ends). */
                    "X-RateLimit-Reset"?: number;
                    /** @description Seconds to wait before sending another request (never less). */
                    "Retry-After": number;
                    /** @description RFC 9745: deprecated since 2026-01-01T00:00:00Z. */
                    Deprecation?: "@1767225600";
                    /** @description RFC 8594: when the operation stops working; from then on it answers 410. */
                    Sunset?: "Thu, 05 Dec 2030 00:00:00 GMT";
                    /** @description The replacement, `GET /pets`, as an absolute URL. */
                    Link?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorObject"] & {
                        /** @constant */
                        code?: "service_unavailable";
                        /** @constant */
                        status?: 503;
                    };
                };
            };
        };
    };
}
