/**
 * The one error type of Hearth. Services, queues and workers throw AppError;
 * the API renders it in one place as an OpenAI-shaped body.
 */

export const errorCodes = {
  invalid_request: { status: 400, type: "invalid_request_error" },
  /** The prompt and max_tokens do not fit the model's context (OpenAI's code for it). */
  context_length_exceeded: { status: 400, type: "invalid_request_error" },
  unauthorized: { status: 401, type: "authentication_error" },
  forbidden: { status: 403, type: "permission_error" },
  not_found: { status: 404, type: "not_found_error" },
  conflict: { status: 409, type: "conflict_error" },
  /** The request's body did not arrive in time (HEARTH_BODY_TIMEOUT_MS); the connection is closed. */
  request_timeout: { status: 408, type: "invalid_request_error" },
  payload_too_large: { status: 413, type: "invalid_request_error" },
  /** The request's headers (an Authorization of 100 KB, say) are over Node's limit; the connection is closed. */
  request_header_fields_too_large: { status: 431, type: "invalid_request_error" },
  rate_limited: { status: 429, type: "rate_limit_error" },
  /** A per-account limit (e.g. deployed models) is reached; waiting does not help, freeing something does. */
  quota_exceeded: { status: 429, type: "insufficient_quota" },
  internal: { status: 500, type: "api_error" },
  /**
   * The model's output could not go on as asked: under a grammar (response_format, tools),
   * llama.cpp refused a token it had sampled. The request was valid; a retry may succeed.
   */
  model_error: { status: 500, type: "model_error" },
  unavailable: { status: 503, type: "service_unavailable_error" },
} as const;

export type ErrorCode = keyof typeof errorCodes;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly param: string | null;
  /** What the operator's logs get besides the message (an internal URL, a server's answer); never sent to clients. */
  readonly detail: string | undefined;
  /** HTTP headers the answer carries (a 429's Retry-After and x-ratelimit-*). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { param?: string | null; cause?: unknown; detail?: string; headers?: Record<string, string> } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.param = options.param ?? null;
    this.detail = options.detail;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return errorCodes[this.code].status;
  }

  get type(): string {
    return errorCodes[this.code].type;
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }

  /** A plain object that survives JSON (for the stream contract). */
  toJSON(): { code: ErrorCode; message: string; param: string | null } {
    return { code: this.code, message: this.message, param: this.param };
  }

  static isCode(value: unknown): value is ErrorCode {
    return typeof value === "string" && Object.hasOwn(errorCodes, value);
  }
}

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}
