/**
 * The rows of a raw statement's result (`db.execute`): postgres-js answers them as an array,
 * PGlite as `{ rows }`. Values come as the driver reads them (numeric and bigint sums as text).
 */
export function resultRows<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}
