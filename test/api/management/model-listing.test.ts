import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHearth, type TestHearth } from "../../helpers/hearth.js";
import { createTestAccount, type Management } from "../../helpers/management.js";

describe("listing models", () => {
  let hearth: TestHearth;
  let me: Management;
  const ids = ["alpha", "bravo", "charlie", "delta", "echo"];

  beforeAll(async () => {
    hearth = await startTestHearth({ worker: false });
    me = await createTestAccount(hearth, "lister");
    for (const id of [...ids].reverse()) expect((await me.createModel(id)).status).toBe(201);
    await me.upload("charlie", "adapter_config.json", "{");
    await me.validate("charlie");
  });
  afterAll(async () => {
    await hearth?.close();
  });

  const list = (query: string) => me.call("GET", `/v1/accounts/lister/models${query}`);

  it("pages through every model in ID order", async () => {
    const seen: string[] = [];
    let token = "";
    let pages = 0;
    do {
      const reply = await list(`?pageSize=2${token ? `&pageToken=${encodeURIComponent(token)}` : ""}`);
      expect(reply.status).toBe(200);
      expect(reply.body.models.length).toBeLessThanOrEqual(2);
      seen.push(...reply.body.models.map((m: { modelId: string }) => m.modelId));
      token = reply.body.nextPageToken;
      pages++;
    } while (token);
    expect(seen).toEqual(ids);
    expect(pages).toBe(3);
  });

  it("filters by state and kind", async () => {
    const failed = await list(`?filter=${encodeURIComponent("state=FAILED AND kind=lora")}`);
    expect(failed.body.models.map((m: { modelId: string }) => m.modelId)).toEqual(["charlie"]);
    const uploading = await list("?filter=state%3DUPLOADING");
    expect(uploading.body.models).toHaveLength(4);
    expect((await list("?filter=kind%3Dbase")).body.models).toEqual([]);
  });

  it("lists the operator's image models beside its base models, and keeps them off the text endpoints", async () => {
    const builtIn = await me.call("GET", `/v1/accounts/hearth/models?filter=${encodeURIComponent("kind=image")}`);
    expect(builtIn.body.models).toEqual([
      expect.objectContaining({ name: "accounts/hearth/models/hearth-sketch", kind: "image", state: "READY" }),
    ]);
    const servable = await me.call("GET", "/v1/models");
    expect(servable.body.data).toContainEqual(
      expect.objectContaining({ id: "accounts/hearth/models/hearth-sketch", kind: "image", parent: null }),
    );
    const wrongKind = await me.call("POST", "/v1/completions", {
      model: "accounts/hearth/models/hearth-sketch",
      prompt: "a red circle",
    });
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.error).toMatchObject({ param: "model", code: "invalid_request" });
    expect(wrongKind.body.error.message).toMatch(/is an image model \(kind image\)/);
  });

  it("refuses bad paging and filter parameters with the parameter named", async () => {
    for (const [query, param] of [
      ["?pageSize=0", "pageSize"],
      ["?pageSize=1000", "pageSize"],
      ["?pageToken=garbage", "pageToken"],
      ["?filter=color%3Dred", "filter"],
      ["?filter=state%3DSLEEPING", "filter"],
    ] as const) {
      const reply = await list(query);
      expect(reply.status, query).toBe(400);
      expect(reply.body.error.param, query).toBe(param);
    }
  });
});
