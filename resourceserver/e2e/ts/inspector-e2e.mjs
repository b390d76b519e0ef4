// Runs the MCP Inspector CLI (npx @modelcontextprotocol/inspector --cli)
// against Linkslot: it links with the pre-registered client demo-mcp-client
// through its own interactive OAuth (PKCE, loopback callback listener), while
// this script plays the person's browser — it reads the authorization URL the
// CLI prints, signs in and approves consent (browser.mjs), and lands on the
// CLI's callback. Then the CLI calls search_bookable_business.
//
// With LINKSLOT_INSPECTOR_CALLBACK=default the CLI gets only --client-id
// demo-mcp-client, no --callback-url: it listens on its default callback,
// http://127.0.0.1:6276/oauth/callback, which the demo client accepts
// through its http://127.0.0.1/oauth/callback redirect (any port), and
// lists the tools. Port 6276 is then needed free.
//
// Environment: LINKSLOT_MCP_URL, LINKSLOT_EMAIL, LINKSLOT_PASSWORD,
// LINKSLOT_INSPECTOR (path of the mcp-inspector binary; default
// node_modules/.bin/mcp-inspector), LINKSLOT_INSPECTOR_CALLBACK (unset, or
// default). Prints one JSON line with the results; exits non-zero on
// failure.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:net";
import { browse } from "./browser.mjs";

const MCP_URL = process.env.LINKSLOT_MCP_URL ?? "http://127.0.0.1:8081/mcp";
const EMAIL = process.env.LINKSLOT_EMAIL ?? "demo@example.com";
const PASSWORD = process.env.LINKSLOT_PASSWORD ?? "linkslot-demo";
const BIN = process.env.LINKSLOT_INSPECTOR ?? "node_modules/.bin/mcp-inspector";
const DEFAULT_CALLBACK = process.env.LINKSLOT_INSPECTOR_CALLBACK === "default";
const INSPECTOR_DEFAULT_CALLBACK = "http://127.0.0.1:6276/oauth/callback"; // the CLI's --callback-url default

const freePort = () => new Promise((resolve, reject) => {
  const s = createServer();
  s.listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
  s.on("error", reject);
});

async function main() {
  // demo-mcp-client accepts any loopback port.
  const callback = DEFAULT_CALLBACK ? INSPECTOR_DEFAULT_CALLBACK : `http://127.0.0.1:${await freePort()}/callback`;
  const home = mkdtempSync(join(tmpdir(), "linkslot-inspector-"));
  const method = DEFAULT_CALLBACK ? ["--method", "tools/list"]
    : ["--method", "tools/call", "--tool-name", "search_bookable_business", "--tool-arg", "query=haircut", "--callback-url", callback];
  const args = ["--cli", MCP_URL, "--transport", "http", ...method, "--client-id", "demo-mcp-client", "--format", "json"];
  const env = { ...process.env, HOME: home, BROWSER: "none", MCP_AUTO_OPEN_ENABLED: "true", MCP_INSPECTOR_SECRET_STORE: "memory", MCP_CATALOG_PATH: join(home, "mcp.json"),
    MCP_CLIENT_CONFIG_PATH: join(home, "client.json") };
  delete env.MCP_OAUTH_CALLBACK_URL; // the CLI's other way of naming a callback
  const child = spawn(BIN, args, { env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "", err = "", browsed = 0, answered = 0;
  const seen = new Set();
  const onText = async (chunk, isErr) => {
    const text = chunk.toString();
    if (isErr) err += text; else out += text;
    // A step-up (the server's 403 insufficient_scope) is confirmed on stdin.
    const prompts = (out + err).match(/Proceed with step-up authorization\? \[y\/N\]/g) ?? [];
    while (answered < prompts.length) { answered++; child.stdin.write("y\n"); }
    for (const m of (out + err).matchAll(/https?:\/\/[^\s"'<>]+\/authorize\?[^\s"'<>]+/g)) {
      if (seen.has(m[0])) continue;
      seen.add(m[0]);
      browsed++;
      try {
        const asked = new URL(m[0]).searchParams.get("redirect_uri");
        if (asked !== callback) throw new Error(`the inspector asked for redirect_uri ${asked}, want ${callback}`);
        const landed = await browse(m[0], { email: EMAIL, password: PASSWORD, redirectPrefix: callback });
        const r = await fetch(landed); // deliver the code to the CLI's callback listener
        await r.text();
      } catch (e) {
        console.error(`inspector-e2e: browser: ${e?.stack ?? e}`);
        child.kill();
      }
    }
  };
  child.stdout.on("data", (c) => onText(c, false));
  child.stderr.on("data", (c) => onText(c, true));
  const timer = setTimeout(() => child.kill(), 120_000);
  const code = await new Promise((resolve) => child.on("close", resolve));
  clearTimeout(timer);
  if (code !== 0) throw new Error(`inspector exited ${code}\nstdout: ${out}\nstderr: ${err}`);
  if (!browsed) throw new Error(`the inspector never asked for authorization\nstdout: ${out}\nstderr: ${err}`);
  const start = out.indexOf("{");
  const res = JSON.parse(out.slice(start));
  if (DEFAULT_CALLBACK) {
    const tools = res.tools ?? res.result?.tools;
    if (!Array.isArray(tools) || tools.length === 0) throw new Error(`unexpected tools/list result: ${out}`);
    console.log(JSON.stringify({ ok: true, callback, authorizations: browsed, stepUps: answered, tools: tools.map((t) => t.name) }));
    return;
  }
  const sc = res.structuredContent ?? res.result?.structuredContent;
  if (!sc || !Array.isArray(sc.results) || sc.results.length === 0 || res.isError) throw new Error(`unexpected result: ${out}`);
  console.log(JSON.stringify({ ok: true, callback, authorizations: browsed, stepUps: answered, results: sc.results.map((r) => r.business_reference) }));
}

main().catch((e) => { console.error(`inspector-e2e: ${e?.stack ?? e}`); process.exit(1); });
