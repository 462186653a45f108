import { z } from "@hono/zod-openapi";

/** OpenAI's cursor-paginated list (files, batches): a page of `item`s and where it starts and ends. */
export function cursorList<T extends z.ZodType>(item: T, name: string) {
  return z
    .strictObject({
      object: z.literal("list"),
      data: z.array(item),
      first_id: z.string().nullable(),
      last_id: z.string().nullable(),
      has_more: z.boolean(),
    })
    .openapi(name);
}
