// Links the official TypeScript MCP SDK client to Linkslot the way a real
// agent does — 401, protected-resource metadata, authorization-server
// metadata, PKCE (S256) authorization with the pre-registered public client
// demo-mcp-client — while this script plays the person's browser: it signs
// in and approves the consent page by posting the pages' own HTML forms with
// fetch. Then it lists the tools and calls search_bookable_business.
//
// With LINKSLOT_CLIENT_METADATA_URL set, the client identifies itself by
// that URL instead (clientMetadataUrl: the SDK sends it as client_id when the
// authorization server advertises client_id_metadata_document_supported,
// and the server fetches the document there); the script fails if the SDK
// falls back to anything else.
//
// With LINKSLOT_REGISTER=dynamic the client starts with no client
// information at all, as an agent meeting a server for the first time: the
// SDK's auth() then registers itself at the authorization server's
// registration_endpoint (RFC 7591, LINKSLOT_DCR_POLICY=open) and links with
// the client_id it was given; the script fails if it was not a fresh one.
//
// Environment: LINKSLOT_MCP_URL (default http://127.0.0.1:8081/mcp),
// LINKSLOT_EMAIL (demo@example.com), LINKSLOT_PASSWORD (linkslot-demo),
// LINKSLOT_QUERY (haircut), LINKSLOT_CLIENT_METADATA_URL (unset),
// LINKSLOT_REGISTER (unset, or dynamic). Prints one JSON line with the
// results; exits non-zero on any failure. HTTPS servers under a test CA need
// NODE_EXTRA_CA_CERTS.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { randomUUID } from "node:crypto";
import { browse } from "./browser.mjs";

const MCP_URL = process.env.LINKSLOT_MCP_URL ?? "http://127.0.0.1:8081/mcp";
const EMAIL = process.env.LINKSLOT_EMAIL ?? "demo@example.com";
const PASSWORD = process.env.LINKSLOT_PASSWORD ?? "linkslot-demo";
const QUERY = process.env.LINKSLOT_QUERY ?? "haircut";
const REDIRECT = "http://127.0.0.1:53682/callback"; // loopback: any port is accepted
const METADATA_URL = process.env.LINKSLOT_CLIENT_METADATA_URL || undefined;
const DYNAMIC = process.env.LINKSLOT_REGISTER === "dynamic";

class DemoClientProvider {
  constructor() {
    this._tokens = undefined; this._verifier = undefined; this.authorizationUrl = undefined; this._client = undefined;
    // The SDK keeps the URL client's information (client_id = the URL), or
    // the registration the server answered, here.
    if (METADATA_URL || DYNAMIC) this.saveClientInformation = (info) => { this._client = info; };
  }
  get clientMetadataUrl() { return METADATA_URL; }
  get redirectUrl() { return REDIRECT; }
  state() { this._state = randomUUID(); return this._state; } // the server requires state (≥ 8 characters)
  get clientMetadata() {
    return { client_name: "Linkslot TypeScript e2e", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  // The registered demo client, unless the script is to link by a URL or by
  // registering: then nothing until the SDK saves what it obtained.
  clientInformation() { return METADATA_URL || DYNAMIC ? this._client : { client_id: "demo-mcp-client" }; }
  tokens() { return this._tokens; }
  saveTokens(t) { this._tokens = t; }
  redirectToAuthorization(url) { this.authorizationUrl = url; }
  saveCodeVerifier(v) { this._verifier = v; }
  codeVerifier() { if (!this._verifier) throw new Error("no PKCE verifier saved"); return this._verifier; }
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
  const clientId = au.searchParams.get("client_id");
  if (METADATA_URL && clientId !== METADATA_URL) throw new Error(`the SDK sent client_id ${clientId}, not the metadata document URL`);
  if (DYNAMIC) {
    const reg = provider._client;
    if (!reg?.client_id || reg.client_id !== clientId || clientId === "demo-mcp-client" || !reg.client_id_issued_at) {
      throw new Error(`the SDK did not link with a client it registered: client_id ${clientId}, registration fields ${Object.keys(reg ?? {}).join(", ") || "none"}`);
    }
  }
  const callback = await browse(au, { email: EMAIL, password: PASSWORD, redirectPrefix: REDIRECT });
  if (callback.searchParams.get("error")) throw new Error(`authorization error: ${callback.searchParams.get("error")}`);
  if (callback.searchParams.get("state") !== provider._state) throw new Error("callback state does not match");
  await transport.finishAuth(callback.searchParams.get("code"));

  transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: provider });
  await client.connect(transport);
  const { tools } = await client.listTools();
  const res = await client.callTool({ name: "search_bookable_business", arguments: { query: QUERY } });
  if (res.isError) throw new Error(`search_bookable_business failed: ${JSON.stringify(res.structuredContent ?? res.content)}`);
  const results = res.structuredContent?.results ?? [];
  const validated = results.length > 0 ? await validateAnswers(client, results[0].business_reference, provider.tokens()?.scope ?? "") : [];
  console.log(JSON.stringify({
    ok: true, clientId, registered: DYNAMIC, protocolVersion: transport.protocolVersion, scope: provider.tokens()?.scope, tools: tools.map((t) => t.name),
    results: results.map((r) => r.business_reference), validated,
  }));
  await client.close();
  if (results.length === 0) throw new Error(`no business found for ${QUERY}`);
}

// validateAnswers calls each kind of answer once — a catalog, open times, a
// list, a refusal of each read tool, a mutation preview when the token may
// write — through the SDK's callTool, which validates every structured
// answer (refusals included) against the tool's listed output schema, $defs
// and $ref, enums and formats included; a mismatch throws. It returns the
// answers validated, as "tool:status or error code".
async function validateAnswers(client, business, scope) {
  const done = [];
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args });
    const sc = r.structuredContent ?? {};
    done.push(`${name}:${sc.error?.code ?? sc.status ?? "ok"}`);
    return r;
  };
  const cat = (await call("check_business_availability", { business_reference: business })).structuredContent?.catalog;
  const service = cat?.services?.[0]?.service_reference;
  let slot;
  for (let d = 1; d <= 14 && service && !slot; d++) {
    const day = new Date(Date.now() + d * 86400000).toISOString().slice(0, 10);
    const av = (await call("check_business_availability", { business_reference: business, service_reference: service, local_date: day })).structuredContent?.availability;
    for (const st of av?.staff ?? []) {
      if (st.slots?.length) { slot = { staff: st.staff_reference, start: st.slots[0].starts_at }; break; }
    }
  }
  await call("check_business_availability", { business_reference: business, service_reference: service ?? "x", local_date: "tomorrow" });
  await call("search_my_bookings", {});
  await call("get_my_booking", { booking_reference: "LS-NOSUCHBOOK" });
  await call("check_my_booking_availability", { booking_reference: "LS-NOSUCHBOOK", local_date: "2030-01-01" });
  if (slot && scope.split(" ").includes("bookings:write")) {
    const args = { business_reference: business, service_reference: service, staff_reference: slot.staff, starts_at: slot.start };
    const confirm = (summary) => ({ confirmed_summary: summary, confirmation_summary_presented: true, confirmation_obtained: true,
      user_confirmation_text: "Yes, go ahead", idempotency_key: randomUUID() });
    const preview = (await call("create_my_booking", args)).structuredContent;
    await call("create_my_booking", { ...args, ...confirm("not the summary") });
    const booked = (await call("create_my_booking", { ...args, ...confirm(preview.confirmed_summary) })).structuredContent?.booking;
    if (booked) {
      const got = (await call("get_my_booking", { booking_reference: booked.booking_reference })).structuredContent?.booking;
      await call("search_my_bookings", { status: "all" });
      await call("reschedule_my_booking", { booking_reference: booked.booking_reference, grant: got.grant, requested_starts_at: slot.start });
      const cancel = { booking_reference: booked.booking_reference, grant: got.grant };
      const cp = (await call("cancel_my_booking", cancel)).structuredContent;
      await call("cancel_my_booking", { ...cancel, ...confirm(cp.confirmed_summary) });
    }
  }
  if (service && scope.split(" ").includes("bookings:write")) {
    // The two tools of §16, through the whole protocol: a preview, the
    // confirmation with its summary, a replay of that call (recorded as
    // "tool:replay") and the same key with other arguments.
    const protocol = async (name, args, other) => {
      const pre = (await call(name, args)).structuredContent;
      const conf = { confirmed_summary: pre?.confirmed_summary ?? "", confirmation_summary_presented: true, confirmation_obtained: true,
        user_confirmation_text: "Yes, please go ahead.", idempotency_key: randomUUID() };
      await call(name, { ...args, ...conf });
      const again = await call(name, { ...args, ...conf });
      if (again.structuredContent?.idempotent_replay === true) done.push(`${name}:replay`);
      await call(name, { ...other, ...conf });
    };
    await protocol("request_business_callback", { business_reference: business, topic: "A quote for a group booking" },
      { business_reference: business, topic: "Something else entirely" });
    const day = (n) => new Date(Date.now() + n * 86400000).toISOString().slice(0, 10);
    const wait = { business_reference: business, service_reference: service, from_local_date: day(1), to_local_date: day(4) };
    await protocol("join_my_waitlist", wait, { ...wait, to_local_date: day(2) });
    await call("search_my_bookings", { status: "waitlisted" });
  }
  return done;
}

main().catch((e) => { console.error(`linkslot-e2e: ${e?.stack ?? e}`); process.exit(1); });
