import crypto from "node:crypto";
import postgres from "postgres";

/** A PostgreSQL database of the bench's own (--db postgres), dropped at the end. */
export interface BenchDatabase {
  url: string;
  drop(): Promise<void>;
}

export async function createBenchDatabase(adminUrl: string): Promise<BenchDatabase> {
  const name = `hearth_bench_${crypto.randomBytes(6).toString("hex")}`;
  const admin = async (statement: string) => {
    const sql = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 10 });
    try {
      await sql.unsafe(statement);
    } finally {
      await sql.end({ timeout: 5 });
    }
  };
  await admin(`create database "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists "${name}" with (force)`) };
}
