// Runs mcp-remote (the stdio-to-remote proxy that desktop hosts such as
// Claude Desktop start as a "command" server) against Linkslot with its
// defaults, and talks to it over stdio with the official TypeScript MCP SDK
// client, as such a host does.
//
// mcp-remote links on its own: 401, protected-resource and authorization-server
// metadata, PKCE, its callback listener on http://localhost:PORT/oauth/callback
// (the port derived from the server URL), and a browser opened on the
// authorization URL. The browser is this script's: mcp-remote opens URLs
// through the `open` package's xdg-open, which with no desktop session runs
// $BROWSER, so BROWSER is a two-line script that writes the URL to a file.
// The script reads it, signs in and approves consent (browser.mjs), and
// lands on mcp-remote's callback. Then it lists the tools and calls
// search_bookable_business through the proxy.
//
// How mcp-remote gets a client (read in its source, dist/chunk-*.js:
// NodeOAuthClientProvider): without --static-oauth-client-info it registers
// dynamically at registration_endpoint (RFC 7591), which Linkslot offers
// with LINKSLOT_DCR_POLICY=open; with --static-oauth-client-info
// '{"client_id":"demo-mcp-client"}' it uses that registered client, whose
// http://localhost/oauth/callback redirect matches on any port.
//
// Environment: LINKSLOT_MCP_URL, LINKSLOT_EMAIL, LINKSLOT_PASSWORD,
// LINKSLOT_QUERY (haircut), LINKSLOT_MCP_REMOTE_CLIENT (a client_id for
// --static-oauth-client-info; unset: dynamic registration),
// LINKSLOT_MCP_REMOTE (mcp-remote's proxy.js; default the one in
// node_modules). Linux only (elsewhere `open` starts the system browser).
// Prints one JSON line; exits non-zero on any failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdtempSync, readFileSync, writeFileSync, chmodSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { browse } from "./browser.mjs";

const MCP_URL = process.env.LINKSLOT_MCP_URL ?? "http://127.0.0.1:8081/mcp";
const EMAIL = process.env.LINKSLOT_EMAIL ?? "demo@example.com";
const PASSWORD = process.env.LINKSLOT_PASSWORD ?? "linkslot-demo";
const QUERY = process.env.LINKSLOT_QUERY ?? "haircut";
const STATIC_CLIENT = process.env.LINKSLOT_MCP_REMOTE_CLIENT || undefined;
const PROXY = process.env.LINKSLOT_MCP_REMOTE ?? "node_modules/mcp-remote/dist/proxy.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  if (process.platform !== "linux") throw new Error("the fake browser works through xdg-open, which mcp-remote uses on Linux only");
  const home = mkdtempSync(join(tmpdir(), "linkslot-mcp-remote-"));
  const opened = join(home, "opened-urls");
  const browser = join(home, "browser");
  writeFileSync(browser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`);
  chmodSync(browser, 0o755);

  const args = [PROXY, MCP_URL];
  if (STATIC_CLIENT) args.push("--static-oauth-client-info", JSON.stringify({ client_id: STATIC_CLIENT }));
  // Only these variables (the SDK adds PATH, USER and a few more): no
  // DISPLAY or desktop session, so xdg-open falls back to $BROWSER.
  const env = { HOME: home, MCP_REMOTE_CONFIG_DIR: join(home, "mcp-auth"), BROWSER: browser };
  if (process.env.NODE_EXTRA_CA_CERTS) env.NODE_EXTRA_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS;
  const transport = new StdioClientTransport({ command: process.execPath, args, env, stderr: "pipe" });
  let log = "";
  transport.stderr?.on("data", (c) => { log += c.toString(); });

  // The person: waits for mcp-remote to open the browser, then consents.
  let authorizeUrl, redirectUri, browserError;
  const person = (async () => {
    for (let i = 0; i < 600 && !authorizeUrl; i++) {
      if (existsSync(opened)) authorizeUrl = readFileSync(opened, "utf8").split("\n").find((l) => l.includes("/authorize?"));
      if (!authorizeUrl) await sleep(100);
    }
    if (!authorizeUrl) throw new Error("mcp-remote never opened the browser");
    redirectUri = new URL(authorizeUrl).searchParams.get("redirect_uri");
    const landed = await browse(authorizeUrl, { email: EMAIL, password: PASSWORD, redirectPrefix: redirectUri });
    if (landed.searchParams.get("error")) throw new Error(`authorization error: ${landed.searchParams.get("error")}`);
    const r = await fetch(landed); // the code to mcp-remote's callback listener
    await r.text();
    if (!r.ok) throw new Error(`mcp-remote's callback answered ${r.status}`);
  })().catch((e) => { browserError = e; transport.close(); }); // a failed consent ends the wait at once

  const client = new Client({ name: "linkslot-mcp-remote-e2e", version: "1.0.0" });
  const timer = setTimeout(() => transport.close(), 120_000);
  try {
    await client.connect(transport, { timeout: 90_000 });
    await person;
    if (browserError) throw browserError;
    const { tools } = await client.listTools();
    const res = await client.callTool({ name: "search_bookable_business", arguments: { query: QUERY } });
    if (res.isError) throw new Error(`search_bookable_business failed: ${JSON.stringify(res.structuredContent ?? res.content)}`);
    const results = res.structuredContent?.results ?? [];
    if (results.length === 0) throw new Error(`no business found for ${QUERY}`);
    const au = new URL(authorizeUrl);
    console.log(JSON.stringify({
      ok: true, clientId: au.searchParams.get("client_id"), registration: STATIC_CLIENT ? "static" : "dynamic", redirectUri,
      scope: au.searchParams.get("scope"), tools: tools.map((t) => t.name), results: results.map((r) => r.business_reference),
    }));
  } catch (e) {
    await person;
    throw new Error(`${e?.message ?? e}${browserError ? `\nbrowser: ${browserError.stack ?? browserError}` : ""}\nmcp-remote stderr:\n${log}`);
  } finally {
    clearTimeout(timer);
    await client.close();
  }
}

main().catch((e) => { console.error(`mcp-remote-e2e: ${e?.stack ?? e}`); process.exit(1); });
