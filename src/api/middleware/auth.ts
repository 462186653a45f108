import { createMiddleware } from "hono/factory";
import type { ApiKeyAuthenticator } from "../../auth/api-key-authenticator.js";
import { AppError } from "../../errors.js";
import type { AppEnv } from "../app-env.js";

/** `Authorization: Bearer <API key>`; the key decides the calling account. */
export function requireApiKey(apiKeys: ApiKeyAuthenticator) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header("authorization");
    const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
    if (!match) {
      throw new AppError("unauthorized", "Missing API key: send it as `Authorization: Bearer <API key>`.");
    }
    const key = await apiKeys.authenticate(match[1]!);
    if (!key) throw new AppError("unauthorized", "Invalid API key.");
    c.set("caller", { accountId: key.accountId, keyId: key.keyId, keyPrefix: key.prefix, role: key.role });
    await next();
  });
}
