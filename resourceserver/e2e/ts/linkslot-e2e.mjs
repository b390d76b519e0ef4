// Links the official TypeScript MCP SDK client to Linkslot the way a real
// agent does — 401, protected-resource metadata, authorization-server
// metadata, PKCE (S256) authorization with the pre-registered public client
// demo-mcp-client — while this script plays the person's browser: it signs
// in and approves the consent page by posting the pages' own HTML forms with
// fetch. Then it lists the tools and calls search_bookable_business.
//
// Environment: LINKSLOT_MCP_URL (default http://127.0.0.1:8081/mcp),
// LINKSLOT_EMAIL (demo@example.com), LINKSLOT_PASSWORD (linkslot-demo),
// LINKSLOT_QUERY (haircut). Prints one JSON line with the results; exits
// non-zero on any failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { randomUUID } from "node:crypto";

const MCP_URL = process.env.LINKSLOT_MCP_URL ?? "http://127.0.0.1:8081/mcp";
const EMAIL = process.env.LINKSLOT_EMAIL ?? "demo@example.com";
const PASSWORD = process.env.LINKSLOT_PASSWORD ?? "linkslot-demo";
const QUERY = process.env.LINKSLOT_QUERY ?? "haircut";
const REDIRECT = "http://127.0.0.1:53682/callback"; // loopback: any port is accepted

class DemoClientProvider {
  constructor() { this._tokens = undefined; this._verifier = undefined; this.authorizationUrl = undefined; }
  get redirectUrl() { return REDIRECT; }
  state() { this._state = randomUUID(); return this._state; } // the server requires state (≥ 8 characters)
  get clientMetadata() {
    return { client_name: "Linkslot TypeScript e2e", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() { return { client_id: "demo-mcp-client" }; } // pre-registered: no dynamic registration
  tokens() { return this._tokens; }
  saveTokens(t) { this._tokens = t; }
  redirectToAuthorization(url) { this.authorizationUrl = url; }
  saveCodeVerifier(v) { this._verifier = v; }
  codeVerifier() { if (!this._verifier) throw new Error("no PKCE verifier saved"); return this._verifier; }
}

// ---- a tiny cookie-keeping browser that posts HTML forms ----
const jar = new Map();
function keepCookies(res) {
  for (const c of res.headers.getSetCookie?.() ?? []) {
    const [pair] = c.split(";");
    const i = pair.indexOf("=");
    jar.set(pair.slice(0, i).trim(), pair.slice(i + 1).trim());
  }
}
async function go(url, init = {}) {
  const headers = new Headers(init.headers ?? {});
  if (jar.size) headers.set("Cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
  const res = await fetch(url, { ...init, headers, redirect: "manual" });
  keepCookies(res);
  return res;
}
const decode = (s) => s.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(+n)).replace(/&#x([0-9a-f]+);/gi, (_, n) => String.fromCharCode(parseInt(n, 16)))
  .replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
const attr = (tag, name) => { const m = tag.match(new RegExp(`\\s${name}="([^"]*)"`)); return m ? decode(m[1]) : undefined; };
function forms(html) {
  const out = [];
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)) {
    const fields = new URLSearchParams();
    for (const inp of m[2].matchAll(/<input\b[^>]*>/g)) {
      const name = attr(inp[0], "name");
      if (name && (attr(inp[0], "type") ?? "text") === "hidden") fields.set(name, attr(inp[0], "value") ?? "");
    }
    const buttons = [...m[2].matchAll(/<button\b[^>]*>/g)].map((b) => ({ name: attr(b[0], "name"), value: attr(b[0], "value") }));
    out.push({ action: attr(m[1], "action") ?? "", method: (attr(m[1], "method") ?? "get").toLowerCase(), fields, buttons, html: m[2] });
  }
  return out;
}
async function post(base, form) {
  return go(new URL(form.action, base), { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: form.fields.toString() });
}

// browse follows the authorization URL as the signed-out person until the
// authorization server redirects to the client's callback.
async function browse(authorizationUrl) {
  let url = new URL(authorizationUrl);
  for (let step = 0; step < 12; step++) {
    if (url.href.startsWith(REDIRECT)) return url;
    const res = await go(url);
    if (res.status >= 300 && res.status < 400) { url = new URL(res.headers.get("location"), url); continue; }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`page ${url.pathname} answered ${res.status}: ${html.slice(0, 300)}`);
    const fs = forms(html).filter((f) => f.method === "post");
    const login = fs.find((f) => /name="password"/.test(f.html));
    const consent = fs.find((f) => f.buttons.some((b) => b.name === "decision" && b.value === "allow"));
    let next;
    if (login) {
      login.fields.set("email", EMAIL);
      login.fields.set("password", PASSWORD);
      next = await post(url, login);
    } else if (consent) {
      consent.fields.set("decision", "allow");
      next = await post(url, consent);
    } else {
      throw new Error(`no sign-in or consent form on ${url.pathname}`);
    }
    if (next.status < 300 || next.status >= 400) throw new Error(`form post on ${url.pathname} answered ${next.status}: ${(await next.text()).slice(0, 300)}`);
    url = new URL(next.headers.get("location"), url);
  }
  throw new Error("too many redirects");
}

async function main() {
  const provider = new DemoClientProvider();
  const client = new Client({ name: "linkslot-ts-e2e", version: "1.0.0" });
  let transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: provider });
  try {
    await client.connect(transport);
    throw new Error("the MCP endpoint answered without asking for authorization");
  } catch (e) {
    if (!(e instanceof UnauthorizedError) || !provider.authorizationUrl) throw e;
  }
  const au = provider.authorizationUrl;
  if (au.searchParams.get("code_challenge_method") !== "S256") throw new Error("authorization request without PKCE S256");
  const callback = await browse(au);
  if (callback.searchParams.get("error")) throw new Error(`authorization error: ${callback.searchParams.get("error")}`);
  if (callback.searchParams.get("state") !== provider._state) throw new Error("callback state does not match");
  await transport.finishAuth(callback.searchParams.get("code"));

  transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: provider });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const res = await client.callTool({ name: "search_bookable_business", arguments: { query: QUERY } });
  if (res.isError) throw new Error(`search_bookable_business failed: ${JSON.stringify(res.structuredContent ?? res.content)}`);
  const results = res.structuredContent?.results ?? [];
  console.log(JSON.stringify({
    ok: true, protocolVersion: transport.protocolVersion, scope: provider.tokens()?.scope, tools: tools.map((t) => t.name),
    results: results.map((r) => r.business_reference),
  }));
  await client.close();
  if (results.length === 0) throw new Error(`no business found for ${QUERY}`);
}

main().catch((e) => { console.error(`linkslot-e2e: ${e?.stack ?? e}`); process.exit(1); });
