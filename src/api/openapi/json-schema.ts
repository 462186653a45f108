import { z } from "zod";

/**
 * JSON Schemas for the OpenAPI document, derived from the zod schemas the routes
 * validate with, so the description cannot drift from the code.
 */

export type JsonSchema = Record<string, unknown>;

const ZOD_TO_JSON = { io: "input", unrepresentable: "any", target: "draft-2020-12" } as const;

export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const parameterRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });

/** `T | null`, the OpenAPI 3.1 (JSON Schema 2020-12) way. */
export const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: "null" }] });

/**
 * The JSON Schema of what a zod schema accepts. `descriptions` adds a description to
 * properties by dotted path ("model.baseModel"); naming a property the schema does
 * not have throws, so a renamed field cannot leave a stale description behind.
 */
export function fromZod(schema: z.ZodType, descriptions: Record<string, string> = {}): JsonSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, ZOD_TO_JSON) as JsonSchema;
  for (const [path, description] of Object.entries(descriptions)) {
    let node: JsonSchema | undefined = json;
    for (const key of path.split(".")) node = node && propertiesOf(node)?.[key];
    if (!node) throw new Error(`OpenAPI: the schema has no property ${path} to describe.`);
    node.description = description;
  }
  return json;
}

/** The query parameters an object schema (of a query string) accepts, one OpenAPI parameter each. */
export function queryParameters(schema: z.ZodType, descriptions: Record<string, string> = {}): JsonSchema[] {
  const json = fromZod(schema, descriptions);
  const required = (json.required as string[] | undefined) ?? [];
  return Object.entries(propertiesOf(json) ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: "query", required: required.includes(name), description, schema: rest };
  });
}

/** The properties of an object schema, looking through `anyOf` (what zod makes of `.nullish()`). */
function propertiesOf(node: JsonSchema): Record<string, JsonSchema> | undefined {
  if (node.properties) return node.properties as Record<string, JsonSchema>;
  for (const member of (node.anyOf as JsonSchema[] | undefined) ?? []) {
    const found = propertiesOf(member);
    if (found) return found;
  }
  return undefined;
}
