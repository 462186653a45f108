import { afterAll, describe, expect, it } from "vitest";
import { chatTemplateProblem } from "../../src/templates/template-check.js";
import { plainText } from "../../src/templates/template-protocol.js";
import { TemplateError, TemplateSandbox } from "../../src/templates/template-sandbox.js";

const SIMPLE = "{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}<assistant>";
const FOREVER = `{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}${SIMPLE}`;
const HUGE_ARRAY = `{% for i in range(10**10) %}{% endfor %}${SIMPLE}`;
const HUGE_STRING =
  "{% set ns = namespace(s='xxxxxxxxxxxxxxxx') %}{% for i in range(26) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s }}" +
  SIMPLE;
const user = (content: string) => ({ role: "user" as const, content });
/** What a render stopped by the sandbox says. */
const BOUND = /longer than 1500 ms|more than 48 MB of memory/;

async function failure(promise: Promise<unknown>): Promise<TemplateError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TemplateError);
  return error as TemplateError;
}

describe("the template sandbox", () => {
  const sandbox = new TemplateSandbox({ threads: 2, timeoutMs: 1500, memoryMb: 48, maxChars: 100_000 });
  afterAll(() => sandbox.close());

  it("renders a template on a thread: the text with each turn, and its stop strings", async () => {
    const rendered = await sandbox.render(SIMPLE, [user("hi"), { role: "assistant", content: "yo" }, user("again")]);
    expect(plainText(rendered.text)).toBe("<user>hi\n<assistant>yo\n<user>again\n<assistant>");
    expect(Array.isArray(rendered.stops)).toBe(true);
  });

  it("kills a template that loops past the time limit, and the next render works", async () => {
    const slow = failure(sandbox.render(FOREVER, [user("hi")]));
    // The other thread keeps serving while one is stuck.
    const meanwhile = await sandbox.render(SIMPLE, [user("meanwhile")]);
    expect(plainText(meanwhile.text)).toContain("meanwhile");
    const error = await slow;
    // Stopped by a bound: its time, or (the inner ranges' garbage outrunning the collector) its heap.
    expect(["time", "memory"]).toContain(error.kind);
    expect(error.message).toMatch(BOUND);
    for (let i = 0; i < 3; i++)
      expect(plainText((await sandbox.render(SIMPLE, [user(`after ${i}`)])).text)).toContain(`after ${i}`);
  });

  it("stops a template that allocates without bound: a 10^10 range, a 2^30-character string", async () => {
    for (const template of [HUGE_ARRAY, HUGE_STRING]) {
      const error = await failure(sandbox.render(template, [user("hi")]));
      expect(error.outOfBounds).toBe(true);
      expect(error.message).toMatch(/memory|too large|longer than/);
    }
    expect(plainText((await sandbox.render(SIMPLE, [user("still here")])).text)).toContain("still here");
  });

  it("refuses output past the size bound", async () => {
    const error = await failure(sandbox.render(SIMPLE, [user("x".repeat(200_000))]));
    expect(error.kind).toBe("size");
    expect(error.message).toMatch(/more than 100000/);
  });

  it("reports the template's own errors as such, without killing the thread", async () => {
    const error = await failure(sandbox.render("{{ raise_exception('no chats here') }}", [user("hi")]));
    expect(error.kind).toBe("template");
    expect(error.message).toMatch(/no chats here/);
  });

  it("fails what waits at once when closed, and refuses what comes after", async () => {
    const own = new TemplateSandbox({ threads: 1, timeoutMs: 5_000, memoryMb: 48 });
    const running = failure(own.render(FOREVER, [user("a")]));
    const waiting = failure(own.render(SIMPLE, [user("b")]));
    await new Promise((r) => setTimeout(r, 100));
    await own.close();
    expect((await running).kind).toBe("unavailable");
    expect((await waiting).kind).toBe("unavailable");
    expect((await failure(own.render(SIMPLE, [user("c")]))).kind).toBe("unavailable");
  });
});

describe("chatTemplateProblem (save-time checks)", () => {
  const sandbox = new TemplateSandbox({ threads: 1, timeoutMs: 1500, memoryMb: 48 });
  afterAll(() => sandbox.close());
  const problem = (template: string) => chatTemplateProblem(sandbox, template);

  it("accepts templates that write every message, including ones that refuse system messages", async () => {
    expect(await problem(SIMPLE)).toBeUndefined();
    const noSystem =
      "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('no system') }}{% endif %}" +
      "[{{ m.role }}] {{ m.content }}\n{% endfor %}";
    expect(await problem(noSystem)).toBeUndefined();
  });

  it("names what is wrong", async () => {
    expect(await problem("{{ x }")).toMatch(/sample conversation failed/);
    expect(await problem("{{ x }}")).toMatch(/sample conversation failed: .*not present/);
    expect(await problem("{{ raise_exception('never') }}")).toMatch(/sample conversation failed: never/);
    expect(await problem(FOREVER)).toMatch(new RegExp(`sample conversation: .*(${BOUND.source})`));
  });

  it("probes long conversations and every role: a template that loops only past 40 messages is refused", async () => {
    const trap =
      "{% if messages|length > 40 %}{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{% endif %}" +
      SIMPLE;
    expect(await problem(trap)).toMatch(new RegExp(`64-message conversation: .*(${BOUND.source})`));
    const systemBomb =
      "{% for m in messages %}{% if m.role == 'system' %}{% for i in range(10**10) %}{% endfor %}{% endif %}{% endfor %}" +
      SIMPLE;
    expect(await problem(systemBomb)).toMatch(/rendering .*(memory|too large|longer than)/);
  });
});
