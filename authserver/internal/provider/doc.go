// Package provider composes Linkslot's fosite OAuth2 provider from exactly the
// handlers the product allows (docs/reference.md §2): the authorization code grant with PKCE (S256
// required for every client, plain refused), refresh tokens (rotated on
// every use), OpenID Connect (explicit flow and refresh), token
// introspection and revocation. Nothing else is registered, so implicit,
// hybrid, password and client-credentials requests are unsupported by
// construction.
//
// Access tokens are RFC 9068 JWTs: header typ "at+jwt", ES256, the kid of
// the current token key from keys.Manager; claims iss, sub (account id),
// aud (the resource), exp, iat, jti, client_id, scope (space-separated) and
// link_id. They live 15 minutes; codes 60 seconds; refresh tokens the
// configured idle lifetime, capped at the absolute lifetime by the store.
// Refresh tokens are issued to every client registered for the refresh_token
// grant, whether or not offline_access was asked for (docs/reference.md §2).
// Scopes match exactly (no wildcards or hierarchy). Signer is fosite's
// jwt.Signer on keys.Manager: it signs access and ID tokens itself (the
// header and claims encoded once, one signature), verifies with whichever
// published key a token's alg and kid name, and leaves the rest to
// fosite's DefaultSigner.
//
// ID tokens are ES256 or RS256 (docs/reference.md §14): the OpenID Connect
// token strategy signs each with the algorithm its client chose
// (id_token_signed_response_alg, IDTokenAlgClient), else Config.IDTokenAlg
// (LINKSLOT_ID_TOKEN_ALG, default ES256), in the code flow and on refresh
// alike. Access tokens are always ES256 and their signer accepts nothing
// else. Only a client that chooses RS256 pays for an RSA signature
// (BenchmarkIDTokenSign).
//
// Provider.NewAccessRequest and NewAccessResponse wrap fosite's to save
// round trips: the client and the presented code or refresh token are read
// in one statement first (fositestore.Store.Prefetch), and the PKCE
// session's deletion joins the batch that redeems the code
// (fositestore.Store.BeginDeferral/EndDeferral). Callers must call
// NewAccessResponse after a successful NewAccessRequest, as fosite's own
// flow does, with the access request it answered.
//
// The caller prepares no context for any of this. Every entry point of the
// Provider (NewAccessRequest, NewAccessResponse, NewAuthorizeRequest,
// NewAuthorizeResponse, NewRevocationRequest, NewIntrospectionRequest,
// IntrospectToken, AuthenticateClient) begins the storage's state for the
// request (fositestore.Store.Begin), which the store's configuration gives
// its fast paths; NewAccessRequest's access request carries that state to
// NewAccessResponse, WriteAccessResponse and GraceAnswered. Request data
// the storage needs is taken from the request (the redirect URI, a client
// assertion's algorithm) or given explicitly (provider.Known, the client
// the authorize endpoint read already). Introspection by a
// private_key_jwt client is NewIntrospectionRequest too.
//
// The refresh grace (docs/reference.md §14) hooks in at the same places:
// NewAccessRequest marks a refresh grant (fositestore.RefreshGrant), the
// refresh-token strategy tells the store each token it generates
// (fositestore.NoteRefreshToken, sealed into the spent token's row), and
// NewAccessResponse answers a grace answer's successor in place of the
// token fosite generated, and a token found used only at commit as
// invalid_grant. fosite's refresh handler itself is unchanged: the store
// reads a spent token within the grace as active.
package provider
