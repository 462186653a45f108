/**
 * The header that carries a generation request's ID in every answer (as OpenAI's does): a
 * stream is resumed by it (`GET /v1/streams/<request_id>`), and an operator finds the
 * request in the logs by it.
 */
export const REQUEST_ID_HEADER = "x-request-id";
