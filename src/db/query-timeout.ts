import type { Sql } from "postgres";

/**
 * A postgres.js client whose queries fail when no answer comes in `ms`. The server's own
 * statement_timeout stops a statement that runs too long, but a server that stops answering
 * (a network partition, a frozen host) enforces nothing: without this, a request waits until
 * TCP gives up, many minutes on. The query is cancelled (best effort) and its caller gets an
 * error that `isDatabaseUnavailable` knows (a 503). drizzle sends every query through
 * `unsafe` and every transaction through `begin`; a transaction is bounded as a whole, and
 * one that ran past its bound rolls back rather than commit once the server answers.
 */
export function withQueryTimeout(client: Sql, ms: number): Sql {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === "unsafe") {
        return (...args: Parameters<Sql["unsafe"]>) => bounded(target.unsafe(...args), ms);
      }
      if (property === "begin") {
        return (...args: unknown[]) => {
          // A transaction past its deadline must not commit later, when the server answers
          // again, after its caller was told it failed: it rolls back instead.
          let expired = false;
          const body = args.at(-1) as (tx: unknown) => Promise<unknown>;
          const guarded = async (tx: unknown) => {
            const result = await body(tx);
            if (expired) throw new QueryTimeoutError(ms);
            return result;
          };
          const begin = target.begin as (...a: unknown[]) => Promise<unknown>;
          return deadline(begin(...args.slice(0, -1), guarded), ms, () => {
            expired = true;
          });
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

/** A postgres.js query (a lazy promise with `.values()`, `.cancel()`…) that rejects past `ms`. */
function bounded<Q extends PromiseLike<unknown> & { cancel(): unknown }>(query: Q, ms: number): Q {
  return new Proxy(query, {
    get(target, property) {
      if (property === "then") {
        return (onFulfilled?: (value: unknown) => unknown, onRejected?: (reason: unknown) => unknown) =>
          deadline(target, ms, () => target.cancel()).then(onFulfilled, onRejected);
      }
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== "function") return value;
      // .values(), .raw()… return the query itself: keep it bounded.
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        return result === target ? bounded(target, ms) : result;
      };
    },
  });
}

function deadline<T>(work: PromiseLike<T>, ms: number, onTimeout: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      try {
        onTimeout();
      } catch {
        // cancelling is best effort: the server may be the thing that is not answering
      }
      reject(new QueryTimeoutError(ms));
    }, ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

export class QueryTimeoutError extends Error {
  readonly code = "QUERY_TIMEOUT";
  constructor(ms: number) {
    super(`PostgreSQL did not answer within ${ms} ms (HEARTH_DB_STATEMENT_TIMEOUT_MS).`);
  }
}
