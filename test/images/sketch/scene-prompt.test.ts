import { describe, expect, it } from "vitest";
import { COLORS } from "../../../src/images/sketch/palette.js";
import { readPrompt } from "../../../src/images/sketch/scene-prompt.js";

describe("reading a prompt", () => {
  it("finds a shape, its colour and the background", () => {
    expect(readPrompt("A red circle on a white background")).toEqual({
      background: COLORS.white,
      objects: [expect.objectContaining({ shape: "circle", color: COLORS.red, count: 1, size: 1 })],
    });
  });

  it("reads counts, plurals, sizes and positions", () => {
    const scene = readPrompt("two blue squares on the left, a large yellow star at the top right and 3 small trees");
    expect(scene.objects).toEqual([
      expect.objectContaining({ shape: "square", count: 2, position: "left", colorName: "blue" }),
      expect.objectContaining({ shape: "star", count: 1, size: 1.45, position: "top-right" }),
      expect.objectContaining({ shape: "tree", count: 3, size: 0.65, position: "bottom", color: COLORS.green }),
    ]);
  });

  it("places X above Y, and knows what a sun, a moon and the night look like", () => {
    const above = readPrompt("a star above two mountains");
    expect(above.objects.map((o) => [o.shape, o.position, o.count])).toEqual([
      ["star", "top", 1],
      ["triangle", "bottom", 2],
    ]);
    const night = readPrompt("a moon over a house at night");
    expect(night.background).not.toEqual(COLORS.white);
    expect(night.objects.map((o) => [o.noun, o.position])).toEqual([
      ["moon", "top-left"],
      ["house", "bottom"],
    ]);
    expect(readPrompt("the sun in the sky").objects[0]).toMatchObject({ color: COLORS.yellow, position: "top-right" });
    expect(readPrompt("a tree on a sky background").background).toEqual(readPrompt("a tree, sky").background);
  });

  it("shifts colours with an adjective and ignores what it does not know", () => {
    const dark = readPrompt("a dark blue box, beautifully lit, trending, 8k").objects;
    expect(dark).toHaveLength(1);
    expect(dark[0]!.color[2]).toBeLessThan(COLORS.blue![2]);
    expect(readPrompt("an impressionist painting of feelings").objects).toEqual([]);
  });

  it("removes what the negative prompt names, by shape or by colour", () => {
    const prompt = "a red circle, a blue square and a green triangle";
    expect(readPrompt(prompt, "squares").objects.map((o) => o.shape)).toEqual(["circle", "triangle"]);
    expect(readPrompt(prompt, "red, green").objects.map((o) => o.shape)).toEqual(["square"]);
  });

  it("bounds the count", () => {
    expect(readPrompt("500 dots").objects[0]!.count).toBe(12);
  });
});
