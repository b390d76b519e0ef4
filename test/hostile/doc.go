// Package hostile holds Linkslot's hostile-input suite: the real
// authorization server (authhttp.New with the real consent pages) and the
// real resource server (rshttp.New) on httptest, on one SQLite store, fed
// what an attacker or a broken client sends — oversized bodies, deeply
// nested JSON, invalid UTF-8, huge strings, SQL and HTML injection in every
// free-text field, smuggled Authorization headers, forged tokens (alg none,
// HS256 keyed with the public key, kid confusion), open-redirect attempts
// on every redirect parameter, and form posts without or with someone
// else's CSRF token.
//
// Every case asserts what docs/reference.md promises (a 4xx with the right
// shape, text stored verbatim and rendered escaped, no redirect off the
// loopback client or the server's own pages) and that the servers keep
// answering afterwards. Every finding fails the test: the four this suite
// once found (oversized form posts, U+0000 in tool arguments, Authorization
// header smuggling, and — in test/cluster — a hung database) are fixed and
// stay enforced.
package hostile
