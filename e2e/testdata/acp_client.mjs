// An editor as the npm registry's @agentclientprotocol/sdk makes one,
// driving `ultra acp` through: a plan accepted to run autonomously, a
// build to completion, a denied call, a cancel, and a session/load.
// The Go test (e2e/acp_test.go) gives it the binary, the repository, the
// scripted model and its scripts; it prints one JSON line of findings.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import path from "node:path";

const sdkPath = path.join(process.env.ULTRA_TEST_NODE_MODULES, "@agentclientprotocol/sdk/dist/v1/stable/acp.js");
const { client, methods, ndJsonStream } = await import(sdkPath);

const [bin, repo, modelRoot] = [process.env.ULTRA_BIN, process.env.REPO, process.env.MODEL_ROOT];
const scripts = JSON.parse(process.env.SCRIPTS);
const proc = spawn(bin, ["acp", "--provider", "openai", "--base-url", modelRoot + "/v1", "--model", "scripted"], {
  cwd: repo, stdio: ["pipe", "pipe", "inherit"],
});
const stream = ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout));

const updates = {}; // session → updates
let answer = "allow_once";
const asked = [];
const app = client({ name: "ultra-e2e" })
  .onNotification(methods.client.session.update, ({ params }) => {
    (updates[params.sessionId] ??= []).push(params.update);
  })
  .onRequest(methods.client.session.requestPermission, ({ params }) => {
    asked.push({ title: params.toolCall.title, options: params.options.map((o) => o.kind) });
    return { outcome: { outcome: "selected", optionId: answer } };
  });

const script = (s) => fetch(modelRoot + "/_script", { method: "POST", body: JSON.stringify(s) });
const text = (sid) => (updates[sid] ?? []).filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
const kinds = (sid) => (updates[sid] ?? []).map((u) => u.sessionUpdate);
const out = {};
// A prompt's response may be handled before the last updates sent ahead
// of it: a moment for them to land.
const settle = () => new Promise((r) => setTimeout(r, 200));

await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
  out.protocolVersion = init.protocolVersion;
  out.loadSession = init.agentCapabilities.loadSession;

  // 1. plan → build → complete: the plan is accepted to run autonomously.
  await script(scripts.build);
  const s1 = await ctx.request(methods.agent.session.new, { cwd: repo, mcpServers: [] });
  out.modes = s1.modes.availableModes.map((m) => m.id);
  await ctx.request(methods.agent.session.setConfigOption, { sessionId: s1.sessionId, configId: "control", value: "assisted" });
  answer = "allow_always";
  const r1 = await ctx.request(methods.agent.session.prompt, { sessionId: s1.sessionId, prompt: [{ type: "text", text: "fix calc" }] });
  await settle();
  out.build = { stop: r1.stopReason, complete: text(s1.sessionId).includes("The run is complete"), land: text(s1.sessionId).includes("/land"),
    plan: kinds(s1.sessionId).includes("plan"), edit: (updates[s1.sessionId] ?? []).some((u) => u.sessionUpdate === "tool_call" && u.kind === "edit" && u.content?.[0]?.type === "diff"),
    asked: asked.length, text: text(s1.sessionId).slice(-1500), kinds: kinds(s1.sessionId).join(" ") };

  // 2. a denied call, then a cancel while the model answers the denial.
  await script(scripts.deny);
  const s2 = await ctx.request(methods.agent.session.new, { cwd: repo, mcpServers: [] });
  await ctx.request(methods.agent.session.setConfigOption, { sessionId: s2.sessionId, configId: "control", value: "manual" });
  answer = "reject_once";
  const p2 = ctx.request(methods.agent.session.prompt, { sessionId: s2.sessionId, prompt: [{ type: "text", text: "clean up" }] });
  // Cancel once the denial is taken (its thought says so).
  for (let i = 0; i < 600; i++) {
    const denied = (updates[s2.sessionId] ?? []).some((u) => u.sessionUpdate === "agent_thought_chunk" && /denied/.test(u.content.text));
    if (denied) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await ctx.notify(methods.agent.session.cancel, { sessionId: s2.sessionId });
  const r2 = await p2;
  await settle();
  const failed = (updates[s2.sessionId] ?? []).some((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
  out.deny = { failed, text: text(s2.sessionId).slice(-1500), kinds: kinds(s2.sessionId).join(" "), stop: r2.stopReason, asked: asked.slice(out.build.asked).map((a) => a.options.join(",")) };

  // 3. session/load replays the first session.
  const before = (updates[s1.sessionId] ?? []).length;
  await ctx.request(methods.agent.session.load, { sessionId: s1.sessionId, cwd: repo, mcpServers: [] });
  const replayed = (updates[s1.sessionId] ?? []).slice(before);
  out.load = { user: replayed.some((u) => u.sessionUpdate === "user_message_chunk" && u.content.text === "fix calc"),
    complete: replayed.some((u) => u.sessionUpdate === "agent_message_chunk" && u.content.text.includes("The run is complete")),
    edit: replayed.some((u) => u.sessionUpdate === "tool_call" && u.kind === "edit") };
});
console.log(JSON.stringify(out));
proc.stdin.end();
proc.kill();
process.exit(0);
