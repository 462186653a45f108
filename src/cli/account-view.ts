import type { Account } from "./api-client.js";
import { shortTime, table, type Output } from "./output.js";

/** Accounts as a table, the same in `hearth list accounts`, `hearth signin` and `npm run admin -- list-accounts`. */
export function accountTable(out: Output, accounts: Account[]): string[] {
  return table(
    out,
    ["ID", "DISPLAY NAME", "ENTERPRISE", "MAX DEPLOYED", "CREATED"],
    accounts.map((a) => [
      a.accountId,
      a.displayName,
      a.enterprise ? "yes" : "no",
      a.maxDeployedModels === null ? "no limit" : String(a.maxDeployedModels),
      shortTime(a.createTime),
    ]),
  );
}
