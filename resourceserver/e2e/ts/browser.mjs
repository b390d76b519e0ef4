// A tiny cookie-keeping "browser" that plays the person during an OAuth
// authorization: it follows redirects, signs in on the login form and
// approves the consent form by posting the pages' own HTML forms with fetch.
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
export async function browse(authorizationUrl, { email, password, redirectPrefix }) {
  let url = new URL(authorizationUrl);
  for (let step = 0; step < 12; step++) {
    if (url.href.startsWith(redirectPrefix)) return url;
    const res = await go(url);
    if (res.status >= 300 && res.status < 400) { url = new URL(res.headers.get("location"), url); continue; }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`page ${url.pathname} answered ${res.status}: ${html.slice(0, 300)}`);
    const fs = forms(html).filter((f) => f.method === "post");
    const login = fs.find((f) => /name="password"/.test(f.html));
    const consent = fs.find((f) => f.buttons.some((b) => b.name === "decision" && b.value === "allow"));
    let next;
    if (login) {
      login.fields.set("email", email);
      login.fields.set("password", password);
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

