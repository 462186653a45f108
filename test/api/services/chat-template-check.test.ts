import { describe, expect, it } from "vitest";
import { chatTemplateProblem } from "../../../src/api/services/chat-template-check.js";

describe("chatTemplateProblem", () => {
  it("accepts templates that write every message", () => {
    expect(
      chatTemplateProblem("{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}<assistant>"),
    ).toBeUndefined();
    // One that refuses system messages is fine: they are folded into the first user turn.
    const noSystem =
      "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('no system') }}{% endif %}" +
      "[{{ m.role }}] {{ m.content }}\n{% endfor %}";
    expect(chatTemplateProblem(noSystem)).toBeUndefined();
  });

  it("names what is wrong", () => {
    expect(chatTemplateProblem("{{ x }")).toMatch(/not a valid Jinja template/);
    expect(chatTemplateProblem("{{ x }}")).toMatch(/each message's content/);
    expect(chatTemplateProblem("{{ raise_exception('never') }}")).toMatch(/sample conversation failed: never/);
    expect(
      chatTemplateProblem("{% for m in messages %}{% if m.role != 'system' %}{{ m.content }}{% endif %}{% endfor %}"),
    ).toMatch(/system message/);
  });
});
