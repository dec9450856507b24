// Drives mcp-scheduler with the official MCP TypeScript SDK client (@modelcontextprotocol/sdk,
// pinned by .ci/install-node-packages), over stdio or Streamable HTTP, and prints what it saw
// as one JSON object on stdout for the Go test (cmd/mcp-scheduler/clients_test.go) to check.
// The SDK validates every structuredContent against the tool's outputSchema itself.
//
//   node sdk-client.cjs stdio   (MCP_BIN, MCP_REPO: the binary and the directory to start it in)
//   node sdk-client.cjs http    (MCP_URL, MCP_TOKEN: the /mcp endpoint and its bearer token)
"use strict";
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

function transport(mode) {
  if (mode === "stdio") {
    return new StdioClientTransport({
      command: process.env.MCP_BIN,
      args: ["serve"],
      cwd: process.env.MCP_REPO,
      env: { ...process.env },
      stderr: "inherit",
    });
  }
  if (mode === "http") {
    return new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), {
      requestInit: { headers: { Authorization: "Bearer " + process.env.MCP_TOKEN } },
    });
  }
  throw new Error("mode must be stdio or http");
}

async function call(client, name, args) {
  try {
    const r = await client.callTool({ name, arguments: args });
    const text = r.content && r.content[0] && r.content[0].text;
    return { isError: r.isError === true, structured: r.structuredContent, text };
  } catch (e) {
    return { protocolError: String(e && e.message ? e.message : e) };
  }
}

async function main() {
  const client = new Client({ name: "sdk-test", version: "1.0.0" });
  await client.connect(transport(process.argv[2]));
  const out = { protocol: client.getServerVersion() };
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  out.created = await call(client, "create_mission", { title: "from the TypeScript SDK", priority: 5 });
  out.dispatched = await call(client, "dispatch", {
    title: "sdk voyage",
    missions: [{ key: "a", title: "first" }, { key: "b", title: "second", depends_on: ["a"] }],
  });
  out.status = await call(client, "status", {});
  out.claim = await call(client, "claim_mission", { agent_id: "sdk-agent", wait_seconds: 1 });
  if (out.claim.structured && out.claim.structured.claimed) {
    const f = { mission_id: out.claim.structured.mission.id, epoch: out.claim.structured.epoch };
    out.heartbeat = await call(client, "heartbeat", f);
    out.complete = await call(client, "complete_mission", { ...f, summary: "done by the SDK client" });
  }
  out.callerError = await call(client, "get_mission", { mission_id: "not-an-id" });
  out.resource = (await client.readResource({ uri: "scheduler://status" })).contents[0];
  out.prompt = (await client.getPrompt({ name: "plan_voyage", arguments: { goal: "ship it" } })).messages[0];
  await client.close();
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write("sdk-client: " + (e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
