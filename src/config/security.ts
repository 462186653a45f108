import { z } from "zod";
import { parseProxyTrust } from "../proxy-trust.js";
import { int, optionalString, parsedBy } from "./schemas.js";
import type { VariableSpec } from "./spec.js";
import { DEFAULT_TEMPLATE_LIMITS } from "./template-limits.js";

/** Who is believed, how long a key check or a session lasts, and the sandbox of users' chat templates. */
export const security = {
  HEARTH_AUTH_FAILURES_PER_MINUTE: {
    schema: int(1, 100_000_000),
    default: "30",
    description: "Failed authentications per minute from one client address; past it, 429 before any key is checked.",
  },
  HEARTH_PAGE_REQUESTS_PER_MINUTE: {
    schema: int(0, 100_000_000),
    default: "300",
    description: "Web page requests per minute per session, or per client address signed out. 0: no limit.",
  },
  HEARTH_TRUST_PROXY: {
    schema: parsedBy(parseProxyTrust),
    default: "false",
    description: "Proxies believed about the client's address: false, a number of hops, or addresses and CIDRs.",
  },
  HEARTH_SESSION_TTL_MS: {
    schema: int(60_000, 30 * 86_400_000),
    default: "43200000",
    description: "A web session ends this long after its last use (12 h); signing out ends it at once.",
  },
  HEARTH_AUTH_CACHE_TTL_MS: {
    schema: int(0, 600_000),
    default: "5000",
    description:
      "How long the API reuses a successful API-key check; a revoked key works at most this long. 0: no cache.",
  },
  HEARTH_METRICS_TOKEN: {
    schema: optionalString.pipe(z.string().min(16, "must be at least 16 characters").optional()),
    description:
      "A bearer token Prometheus may scrape `GET /metrics` with (16+ characters); unset, only admin keys may.",
  },
  HEARTH_TEMPLATE_TIMEOUT_MS: {
    schema: int(10, 60_000),
    default: String(DEFAULT_TEMPLATE_LIMITS.timeoutMs),
    description: "The longest one rendering of a user's chat template may take; then the request fails with 400.",
  },
  HEARTH_TEMPLATE_MEMORY_MB: {
    schema: int(16, 4096),
    default: String(DEFAULT_TEMPLATE_LIMITS.memoryMb),
    description: "Heap, in MB, of each thread that renders users' chat templates; a template needing more gets 400.",
  },
  HEARTH_TEMPLATE_THREADS: {
    schema: int(1, 64),
    default: String(DEFAULT_TEMPLATE_LIMITS.threads),
    description: "Threads per process (API and worker) that render users' chat templates, never the main thread.",
  },
  HEARTH_TEMPLATE_QUARANTINE_MS: {
    schema: int(0, 86_400_000),
    default: String(DEFAULT_TEMPLATE_LIMITS.quarantineMs),
    description: "How long a template that went past its time or memory bound is refused at once (400). 0: never.",
  },
} satisfies Record<string, VariableSpec>;
