import type { ApiKeyScope } from "../../domain/vocabulary.js";
import { AppError } from "../../errors.js";
import type { Caller } from "../../domain/caller.js";
import type { RouteScope } from "../contract/route.js";

/** The 403 of a key without the scope an operation needs. */
export function missingScope(scope: ApiKeyScope, scopes: readonly ApiKeyScope[]): AppError {
  return new AppError(
    "forbidden",
    `This needs a key with the ${scope} scope; this key has ${scopes.join(", ")}. An admin can issue one (docs/security.md).`,
  );
}

/** Throws the 403 unless the caller's key has `scope`; mountRoute calls it for every route it mounts. */
export function checkScope(caller: Pick<Caller, "scopes">, scope: RouteScope): void {
  if (scope !== "any" && !caller.scopes.includes(scope)) throw missingScope(scope, caller.scopes);
}
