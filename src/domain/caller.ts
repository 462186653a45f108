import type { ApiKeyScope } from "./vocabulary.js";

/** Who makes a request: the account and the key it authenticated with (or its web session's key). */
export interface Caller {
  accountId: string;
  keyId: string;
  /** The key's first characters, as listings show it (auth/api-keys.ts apiKeyPrefix). */
  keyPrefix: string;
  /** What the key may do (vocabulary.ts API_KEY_SCOPES). */
  scopes: readonly ApiKeyScope[];
}
