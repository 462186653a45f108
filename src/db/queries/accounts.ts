import { asc, eq, ne } from "drizzle-orm";
import type { Db } from "../client.js";
import { accounts, type Account } from "../schema/accounts.js";

export interface CreateAccountInput {
  id: string;
  displayName: string;
  enterprise?: boolean;
  maxDeployedModels?: number;
}

/** What an admin may change on an account: its limits, null meaning the configured default. */
export type AccountPatch = Partial<
  Pick<
    Account,
    | "displayName"
    | "enterprise"
    | "maxDeployedModels"
    | "requestsPerMinute"
    | "tokensPerMinute"
    | "maxInFlightRequests"
    | "maxModels"
    | "maxStoredBytes"
  >
>;

/** Changes an account; null when there is no such account. */
export async function updateAccount(db: Db, id: string, patch: AccountPatch): Promise<Account | null> {
  if (Object.keys(patch).length === 0) return getAccount(db, id);
  const rows = await db.update(accounts).set(patch).where(eq(accounts.id, id)).returning();
  return rows[0] ?? null;
}

/** Creates an account; null when the ID is taken. */
export async function createAccount(db: Db, input: CreateAccountInput): Promise<Account | null> {
  const rows = await db
    .insert(accounts)
    .values({
      id: input.id,
      displayName: input.displayName,
      enterprise: input.enterprise,
      maxDeployedModels: input.maxDeployedModels,
    })
    .onConflictDoNothing({ target: accounts.id })
    .returning();
  return rows[0] ?? null;
}

/** Creates the account unless it exists; true when this call created it. */
export async function ensureAccount(db: Db, input: CreateAccountInput): Promise<boolean> {
  return (await createAccount(db, input)) !== null;
}

export async function getAccount(db: Db, id: string): Promise<Account | null> {
  const rows = await db.select().from(accounts).where(eq(accounts.id, id)).limit(1);
  return rows[0] ?? null;
}

export async function listAccounts(db: Db): Promise<Account[]> {
  return db.select().from(accounts).orderBy(asc(accounts.createdAt), asc(accounts.id));
}

/** Whether any account other than `exceptId` exists (first-start detection). */
export async function hasAccountsOtherThan(db: Db, exceptId: string): Promise<boolean> {
  const rows = await db.select({ id: accounts.id }).from(accounts).where(ne(accounts.id, exceptId)).limit(1);
  return rows.length > 0;
}
