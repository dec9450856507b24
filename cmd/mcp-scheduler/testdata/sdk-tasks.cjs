// Drives mcp-scheduler's MCP tasks (protocol 2025-11-25) with the official TypeScript SDK
// client's experimental task API (@modelcontextprotocol/sdk, pinned by
// .ci/install-node-packages), over stdio or Streamable HTTP, and prints what it saw as one
// JSON object on stdout for cmd/mcp-scheduler/tasks_sdk_test.go to check.
//
//   node sdk-tasks.cjs stdio   (MCP_BIN, MCP_REPO: the binary and the directory to start it in)
//   node sdk-tasks.cjs http    (MCP_URL, MCP_TOKEN: the /mcp endpoint and its bearer token)
"use strict";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

function transport(mode) {
  if (mode === "stdio") {
    return new StdioClientTransport({
      command: process.env.MCP_BIN, args: ["serve"], cwd: process.env.MCP_REPO,
      env: { ...process.env }, stderr: "inherit",
    });
  }
  if (mode === "http") {
    return new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), {
      requestInit: { headers: { Authorization: "Bearer " + process.env.MCP_TOKEN } },
    });
  }
  throw new Error("mode must be stdio or http");
}

async function code(p) {
  try {
    await p;
    return { ok: true };
  } catch (e) {
    return { code: e.code, message: String(e.message) };
  }
}

async function main() {
  const client = new Client({ name: "sdk-tasks", version: "1.0.0" }, { capabilities: { tasks: { list: {}, cancel: {} } } });
  await client.connect(transport(process.argv[2]));
  const tasks = client.experimental.tasks;
  const out = { protocol: client.getServerVersion(), capabilities: client.getServerCapabilities() };
  const tools = (await client.listTools()).tools;
  out.taskSupport = Object.fromEntries(tools.filter((t) => t.execution).map((t) => [t.name, t.execution.taskSupport]));

  // A waiting dispatch as a task, followed to its result by the SDK (tasks/get, tasks/result).
  out.dispatch = [];
  for await (const m of tasks.callToolStream({ name: "dispatch", arguments: {
    title: "sdk task voyage", wait_seconds: 1, missions: [{ key: "a", title: "first" }] } })) {
    if (m.type === "taskCreated") out.dispatch.push({ type: m.type, status: m.task.status, taskId: m.task.taskId });
    else if (m.type === "taskStatus") out.dispatch.push({ type: m.type, status: m.task.status });
    else if (m.type === "result") out.dispatch.push({ type: m.type, structured: m.result.structuredContent, meta: m.result._meta });
    else out.dispatch.push({ type: m.type, error: String(m.error && m.error.message) });
  }

  // A claim that waits 300 s, cancelled by tasks/cancel. It must not be able to finish first:
  // the dispatch's mission is queued and runnable, and a claim for any persona would take it
  // (at once on an idle machine, or before the cancel arrives on a loaded one), so this claim
  // accepts only a persona no mission has.
  let held;
  for await (const m of tasks.callToolStream({ name: "claim_mission", arguments: {
    agent_id: "sdk-waiter", personas: ["sdk-no-such-persona"], wait_seconds: 300 } })) {
    if (m.type === "taskCreated") { held = m.task.taskId; break; }
  }
  out.cancelled = (await tasks.cancelTask(held)).status;
  out.afterCancel = (await tasks.getTask(held)).status;
  out.listed = (await tasks.listTasks()).tasks.map((t) => t.taskId).includes(held);
  out.cancelAgain = await code(tasks.cancelTask(held));
  out.unknown = await code(tasks.getTask("task-00000000000000000000000000000000"));
  await client.close();
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write("sdk-tasks: " + (e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
