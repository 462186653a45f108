import { describe, expect, it } from "vitest";
import { IntakeGate } from "../../src/limits/intake-gate.js";

/** The intake gate's bookkeeping (limits/intake-gate.ts); test/api/fair-scheduling.test.ts runs it in the API. */
describe("IntakeGate", () => {
  const settled = async <T>(promise: Promise<T>) => {
    let done = false;
    void promise.then(() => {
      done = true;
    });
    await new Promise((r) => setImmediate(r));
    return done;
  };

  it("lets in at most its places per account, the others in order of arrival as places are left", async () => {
    const gate = new IntakeGate(2);
    const order: string[] = [];
    const enter = (who: string) =>
      gate.enter("a").then((leave) => {
        order.push(who);
        return leave;
      });
    const first = await enter("a1");
    const second = await enter("a2");
    const third = enter("a3");
    const fourth = enter("a4");
    expect(await settled(third)).toBe(false);
    expect(gate.load("a")).toEqual({ active: 2, waiting: 2 });
    second();
    second(); // leaving twice hands over one place, not two
    expect(await settled(fourth)).toBe(false);
    expect(order).toEqual(["a1", "a2", "a3"]);
    first();
    (await third)();
    (await fourth)();
    expect(order).toEqual(["a1", "a2", "a3", "a4"]);
    expect(gate.load("a")).toEqual({ active: 0, waiting: 0 });
  });

  it("never holds one account's request behind another's waiting ones", async () => {
    const gate = new IntakeGate(1);
    const flood = [await gate.enter("flood"), gate.enter("flood"), gate.enter("flood")];
    expect(await settled(flood[1] as Promise<() => void>)).toBe(false);
    const other = gate.enter("calm");
    expect(await settled(other)).toBe(true);
    expect(gate.load("flood")).toEqual({ active: 1, waiting: 2 });
    expect(gate.load("calm")).toEqual({ active: 1, waiting: 0 });
  });
});
