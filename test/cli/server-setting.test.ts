import { describe, expect, it } from "vitest";
import { CliError, EXIT } from "../../src/cli/exit-codes.js";
import { resolveServer } from "../../src/cli/server-setting.js";

// One resolution for the hearth CLI and npm run admin: option, environment, profile, default.
describe("resolveServer", () => {
  const profile = { server: "http://remembered:8080/v1" };
  const env = { HEARTH_BASE_URL: "http://from-env:9090/" };
  const fallback = "http://127.0.0.1:8080";

  it("takes the option, else HEARTH_BASE_URL, else the remembered server, else the default", () => {
    expect(resolveServer("http://option:1", env, profile, fallback)).toEqual({
      url: "http://option:1",
      from: "option",
    });
    expect(resolveServer(undefined, env, profile, fallback)).toEqual({
      url: "http://from-env:9090",
      from: "environment",
    });
    expect(resolveServer(undefined, {}, profile, fallback)).toEqual({ url: "http://remembered:8080", from: "profile" });
    expect(resolveServer(undefined, {}, {}, fallback)).toEqual({ url: fallback, from: "default" });
    expect(resolveServer(undefined, { HEARTH_BASE_URL: "" }, undefined, fallback).from).toBe("default");
  });

  it("says which setting holds a bad address (a usage error)", () => {
    const bad = (run: () => unknown) => {
      try {
        run();
      } catch (e) {
        expect(e).toBeInstanceOf(CliError);
        expect((e as CliError).exitCode).toBe(EXIT.usage);
        return (e as Error).message;
      }
      throw new Error("no error");
    };
    expect(bad(() => resolveServer(undefined, { HEARTH_BASE_URL: "127.0.0.1:8080" }, profile, fallback))).toMatch(
      /^Invalid server address in HEARTH_BASE_URL: /,
    );
    expect(bad(() => resolveServer(undefined, {}, { server: "ftp://x" }, fallback))).toMatch(
      /^Invalid server address in the profile: ftp:\/\/x: only http/,
    );
  });
});
