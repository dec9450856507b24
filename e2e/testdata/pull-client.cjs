// An external pull-mode agent for the end-to-end tests (e2e/pull_*_test.go): the official MCP
// TypeScript SDK client (@modelcontextprotocol/sdk, pinned by .ci/install-node-packages) over
// Streamable HTTP with a bearer token, driven step by step by the Go test.
//
//   MCP_URL=http://127.0.0.1:PORT/mcp MCP_TOKEN=... node pull-client.cjs
//
// It connects, prints {"ready":true} (or {"connectError":"..."} and exits 0), then reads one
// JSON command per stdin line and answers one JSON line on stdout:
//   {"op":"call","name":TOOL,"args":{...}}      → {"isError","structured","text"} or {"protocolError"}
//   {"op":"write","dir":D,"file":F,"content":C}  → {"ok":true}   (the agent edits its workspace)
//   {"op":"session"}                              → {"sessionId","protocolVersion"} of the transport
//   {"op":"terminate"}                            → {"ok":true} or {"error"} (DELETE of the session)
//   {"op":"close"}                                → {"ok":true}, then exits
"use strict";
const fs = require("fs");
const path = require("path");
const readline = require("readline");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

function out(v) {
  process.stdout.write(JSON.stringify(v) + "\n");
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
  const client = new Client({ name: "pull-agent", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(process.env.MCP_URL), {
    requestInit: { headers: { Authorization: "Bearer " + process.env.MCP_TOKEN } },
  });
  try {
    await client.connect(transport);
  } catch (e) {
    out({ connectError: String(e && e.message ? e.message : e) });
    return;
  }
  out({ ready: true, server: client.getServerVersion() });
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (!line.trim()) continue;
    const cmd = JSON.parse(line);
    switch (cmd.op) {
      case "call":
        out(await call(client, cmd.name, cmd.args || {}));
        break;
      case "write":
        fs.mkdirSync(path.dirname(path.join(cmd.dir, cmd.file)), { recursive: true });
        fs.writeFileSync(path.join(cmd.dir, cmd.file), cmd.content);
        out({ ok: true });
        break;
      case "session":
        out({ sessionId: transport.sessionId || "", protocolVersion: transport.protocolVersion || "" });
        break;
      case "terminate":
        try {
          await transport.terminateSession();
          out({ ok: true });
        } catch (e) {
          out({ error: String(e && e.message ? e.message : e) });
        }
        break;
      case "close":
        await client.close();
        out({ ok: true });
        return;
      default:
        out({ error: "unknown op " + cmd.op });
    }
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write("pull-client: " + (e && e.stack ? e.stack : e) + "\n");
    process.exit(1);
  },
);
