import type { Model } from "./api-client.js";
import { bytes, details, shortTime, table, type Output } from "./output.js";

/** How models look in text output. */

export function modelDetails(out: Output, model: Model): string[] {
  const deployment = model.deployment;
  const deploymentText = !deployment
    ? "not deployed"
    : `${out.state(deployment.state)}${deployment.reason ? `: ${deployment.reason}` : ""}` +
      (deployment.state === "DEPLOYED" && deployment.deployTime ? ` since ${shortTime(deployment.deployTime)}` : "");
  const pairs: [string, string][] = [
    ["Name", out.paint(model.name, "bold")],
    ["Display name", model.displayName],
    ...(model.description ? [["Description", model.description] as [string, string]] : []),
    ["Kind", model.kind],
    ["Base model", model.baseModel ?? "(from the upload's hearth.json, once validated)"],
    ["State", `${out.state(model.state)}${model.stateReason ? `: ${model.stateReason}` : ""}`],
    ...(model.format
      ? [["Format", `${model.format}${model.rank ? `, rank ${model.rank}` : ""}`] as [string, string]]
      : []),
    ...(model.contextLength ? [["Context", `${model.contextLength} tokens`] as [string, string]] : []),
    ["Chat template", model.conversationConfig ? "its own" : "the base model's"],
    ["Deployment", deploymentText],
    ["Created", shortTime(model.createTime)],
    ["Updated", shortTime(model.updateTime)],
  ];
  if (model.files) {
    const files = model.files.map((f) => `${f.name} (${bytes(f.size)})`).join(", ");
    pairs.push(["Files", files || "none uploaded"]);
  }
  return details(pairs);
}

export function modelTable(out: Output, models: Model[]): string[] {
  return table(
    out,
    ["ID", "KIND", "BASE MODEL", "STATE", "DEPLOYMENT", "CREATED"],
    models.map((m) => [
      m.modelId,
      m.kind,
      m.baseModel ?? "-",
      out.state(m.state),
      out.state(m.deployment?.state),
      shortTime(m.createTime),
    ]),
  );
}

/** One line: what the model is now and what to do next. */
export function modelSummary(out: Output, model: Model): string {
  const what = [
    model.format && `${model.format} adapter`,
    model.rank && `rank ${model.rank}`,
    model.baseModel && `for ${model.baseModel}`,
  ]
    .filter(Boolean)
    .join(", ");
  return `${out.paint(model.name, "bold")} is ${out.state(model.state)}${what ? ` (${what})` : ""}.`;
}
