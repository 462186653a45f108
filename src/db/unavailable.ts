import { AppError } from "../errors.js";

/** For reads a request cannot do without: a database that fails becomes a 503, not a 500. */
export async function orUnavailable<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (cause) {
    if (cause instanceof AppError) throw cause;
    throw new AppError("unavailable", "The database is unavailable; please retry shortly.", { cause });
  }
}
