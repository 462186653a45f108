import { z } from "@hono/zod-openapi";

/**
 * What a chat request carries beside its sampling: the conversation's messages (with tool calls
 * and tool results), the tools it offers, and the choice among them; chatRequestSchema in
 * requests.ts puts them together.
 */

const textPart = z.object({ type: z.literal("text"), text: z.string() });
const messageContent = z.union([z.string(), z.array(textPart).min(1)], {
  message: "content must be a string or an array of text parts",
});

const requestToolCall = z.object({
  id: z.string({ message: "a tool call needs its id" }).min(1),
  type: z.literal("function", { message: "a tool call's type must be 'function'" }),
  function: z.object({
    name: z.string({ message: "a tool call needs its function's name" }).min(1),
    arguments: z.string({ message: "a tool call's arguments must be a JSON string" }),
  }),
});

export const chatMessage = z.discriminatedUnion(
  "role",
  [
    z.object({
      role: z.enum(["system", "developer", "user"]),
      content: messageContent,
      name: z.string().nullish(),
    }),
    z.object({
      role: z.literal("assistant"),
      content: messageContent.nullish(),
      name: z.string().nullish(),
      tool_calls: z.array(requestToolCall).nullish(),
    }),
    z.object({
      role: z.literal("tool"),
      content: messageContent,
      tool_call_id: z.string({ message: "a tool message needs the tool_call_id of the call it answers" }).min(1),
    }),
  ],
  { message: "role must be one of system, developer, user, assistant, tool" },
);

/** OpenAI's function names: letters, digits, underscores and dashes, at most 64. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export const tool = z.object({
  type: z.literal("function", { message: "a tool's type must be 'function'" }),
  function: z.object({
    name: z.string({ message: "a function needs a name" }).regex(TOOL_NAME, {
      message: "a function name has 1 to 64 letters, digits, underscores or dashes",
    }),
    description: z.string().nullish(),
    parameters: z
      .record(z.string(), z.unknown(), { message: "a function's parameters must be a JSON schema object" })
      .nullish(),
    strict: z.boolean().nullish(),
  }),
});

export const toolChoice = z.union(
  [
    z.enum(["none", "auto", "required"]),
    z.object({ type: z.literal("function"), function: z.object({ name: z.string() }) }),
  ],
  { message: "tool_choice must be none, auto, required or {type: 'function', function: {name}}" },
);
