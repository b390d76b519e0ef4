package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/linkslot/linkslot/internal/authheader"
	"github.com/linkslot/linkslot/internal/clientaddr"
	"github.com/linkslot/linkslot/internal/loopback"
	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/requestid"
	"github.com/linkslot/linkslot/internal/scope"
	"github.com/linkslot/linkslot/resourceserver/internal/ratelimit"
	"github.com/linkslot/linkslot/resourceserver/internal/tokencheck"
)

// MaxBody is the largest request body /mcp accepts.
const MaxBody = 1 << 20

// Authenticator verifies a bearer token (*tokencheck.Checker).
type Authenticator interface {
	Verify(ctx context.Context, raw string) (tokencheck.Identity, error)
}

var _ Authenticator = (*tokencheck.Checker)(nil)

// Options configure the router.
type Options struct {
	Resource       string   // canonical resource URI (token audience), e.g. http://127.0.0.1:8081/mcp
	Issuer         string   // the authorization server
	AllowedOrigins []string // extra browser origins
	// MCP is the SDK's streamable handler.
	MCP http.Handler
	// Auth verifies bearer tokens (required).
	Auth Authenticator
	// RequiredScope names the scope a tools/call needs.
	RequiredScope func(tool string) (string, bool)
	Health        http.Handler // serves /healthz and /readyz
	// Addresses limits requests per client address before authentication
	// (nil: unlimited).
	Addresses ratelimit.Allower
	// ClientAddr decides a request's client address (trusted proxies,
	// LINKSLOT_TRUSTED_PROXIES); it is Echo's IPExtractor, so c.RealIP()
	// answers the same. Nil: the TCP peer.
	ClientAddr *clientaddr.Resolver
	Logger     *slog.Logger
	// Timeout bounds each request's work, database calls included
	// (LINKSLOT_REQUEST_TIMEOUT; 0: no deadline).
	Timeout time.Duration
}

type router struct {
	o           Options
	metadataURL string
	metadata    []byte
	selfOrigin  string
	loopback    bool
	resHost     string
	origins     map[string]bool
	mcp         http.Handler
}

// New builds the Echo application.
func New(o Options) (*echo.Echo, error) {
	if o.MCP == nil || o.RequiredScope == nil || o.Auth == nil {
		return nil, errors.New("router: MCP, RequiredScope and Auth are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	u, err := url.Parse(o.Resource)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("router: resource %q is not an absolute URL", o.Resource)
	}
	mdURL, err := MetadataURL(o.Resource)
	if err != nil {
		return nil, err
	}
	md, _ := json.Marshal(Metadata{
		Resource:               o.Resource,
		AuthorizationServers:   []string{o.Issuer},
		ScopesSupported:        []string{scope.OpenID},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Linkslot bookings (MCP)",
	})
	r := &router{
		o: o, metadataURL: mdURL, metadata: md,
		selfOrigin: strings.ToLower(u.Scheme + "://" + u.Host),
		loopback:   loopback.Host(u.Hostname()),
		resHost:    strings.ToLower(u.Host),
		origins:    map[string]bool{},
	}
	for _, a := range o.AllowedOrigins {
		r.origins[strings.ToLower(strings.TrimSuffix(a, "/"))] = true
	}
	r.mcp = o.MCP

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.IPExtractor = o.ClientAddr.Addr
	e.HTTPErrorHandler = r.errorHandler
	e.Use(echo.WrapMiddleware(requestid.Middleware), r.accessLog, r.deadline)
	if o.Health != nil {
		e.GET("/healthz", echo.WrapHandler(o.Health))
		e.GET("/readyz", echo.WrapHandler(o.Health))
	}
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.EscapedPath(), "/")} {
		e.GET(p, r.serveMetadata)
		e.OPTIONS(p, r.serveMetadata)
	}
	mcpPath := u.EscapedPath()
	if mcpPath == "" {
		mcpPath = "/"
	}
	e.POST(mcpPath, r.serveMCP)
	e.OPTIONS(mcpPath, r.preflight)
	e.Match([]string{http.MethodGet, http.MethodDelete, http.MethodPut, http.MethodPatch, http.MethodHead}, mcpPath, func(c echo.Context) error {
		c.Response().Header().Set("Allow", "POST")
		return c.JSON(http.StatusMethodNotAllowed, map[string]string{"error": problem.CodeMethodNotAllowed, "error_description": "this MCP endpoint is stateless: send JSON-RPC requests with POST"})
	})
	return e, nil
}

// MetadataURL is the RFC 9728 metadata URL of a resource: the well-known
// path inserted between the host and the resource's path.
func MetadataURL(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("router: resource %q is not an absolute URL", resource)
	}
	return u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.EscapedPath(), "/"), nil
}

// Metadata is the RFC 9728 protected-resource metadata document.
type Metadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

func (r *router) serveMetadata(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, Mcp-Protocol-Version")
	if c.Request().Method == http.MethodOptions {
		return c.NoContent(http.StatusNoContent)
	}
	h.Set("Cache-Control", "public, max-age=300")
	return c.Blob(http.StatusOK, "application/json", r.metadata)
}

// mcpInfo is what the access log learns about a /mcp request.
type mcpInfo struct {
	method, tool, link string
}

type infoKey struct{}

func (r *router) serveMCP(c echo.Context) error {
	req, w := c.Request(), c.Response()
	info, _ := req.Context().Value(infoKey{}).(*mcpInfo)
	if info == nil {
		info = &mcpInfo{}
	}

	// 1. Per-address limit, before any work.
	if r.o.Addresses != nil {
		if ok, after := r.o.Addresses.Allow(req.Context(), clientAddr(c)); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(int(after/time.Second)))
			return c.JSON(http.StatusTooManyRequests, map[string]any{"error": problem.CodeRateLimited, "error_description": "too many requests from this address", "retry_after_sec": int(after / time.Second)})
		}
	}
	// 2. Origin and Host.
	origin := req.Header.Get("Origin")
	if origin != "" && !r.originAllowed(origin) {
		return c.JSON(http.StatusForbidden, map[string]string{"error": problem.CodeForbidden, "error_description": "this Origin may not call the MCP endpoint"})
	}
	r.cors(c, origin)
	if r.loopback && !r.hostAllowed(req.Host) {
		return c.JSON(http.StatusForbidden, map[string]string{"error": problem.CodeForbidden, "error_description": "unexpected Host header"})
	}
	// 3. Body: size, batch, and what is being called.
	body, err := io.ReadAll(io.LimitReader(req.Body, MaxBody+1))
	if err != nil {
		return c.JSON(http.StatusBadRequest, map[string]string{"error": problem.CodeInvalidRequest, "error_description": "could not read the request body"})
	}
	if len(body) > MaxBody {
		return c.JSON(http.StatusRequestEntityTooLarge, map[string]string{"error": problem.CodeRequestTooLarge, "error_description": "request bodies are limited to 1 MiB"})
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		return c.JSON(http.StatusBadRequest, map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": -32600, "message": "JSON-RPC batches are not supported: send one request per POST"}})
	}
	var peek struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &peek)
	info.method = peek.Method
	if peek.Method == "tools/call" {
		info.tool = peek.Params.Name
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))

	// 4. Authentication.
	raw, berr := authheader.Bearer(req.Header)
	switch {
	case errors.Is(berr, authheader.ErrMissing):
		return r.challenge(c, http.StatusUnauthorized, "", "openid", "")
	case errors.Is(berr, authheader.ErrMultiple):
		return r.challenge(c, http.StatusBadRequest, problem.CodeInvalidRequest, "openid", "send exactly one Authorization header")
	case berr != nil:
		return r.challenge(c, http.StatusUnauthorized, "invalid_token", "openid", "the Authorization header must be \"Bearer\", one space, and the access token")
	}
	id, err := r.o.Auth.Verify(req.Context(), raw)
	switch {
	case errors.Is(err, tokencheck.ErrUnavailable):
		r.o.Logger.ErrorContext(req.Context(), "token check unavailable", "err", err)
		w.Header().Set("Retry-After", "2")
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"error": problem.CodeTemporarilyUnavailable, "error_description": "the token could not be checked; retry shortly"})
	case err != nil:
		r.o.Logger.InfoContext(req.Context(), "token refused", "reason", err.Error())
		return r.challenge(c, http.StatusUnauthorized, "invalid_token", "openid", "the access token is invalid, expired, or its link was disconnected")
	}
	info.link = id.LinkID
	// 5. Scope of the tool being called.
	if info.tool != "" {
		if need, ok := r.o.RequiredScope(info.tool); ok && !scope.Has(id.Scopes, need) {
			return r.challenge(c, http.StatusForbidden, "insufficient_scope", scope.Join([]string{scope.OpenID, need}), "this tool needs the "+need+" scope")
		}
	}
	// The identity enters the context once; the SDK hands the context's
	// values (this, the request id, the deadline) on to the tool handlers.
	r.mcp.ServeHTTP(w, req.WithContext(tokencheck.WithIdentity(req.Context(), id)))
	return nil
}

// challenge answers 401/403 with an RFC 6750 / RFC 9728 challenge.
func (r *router) challenge(c echo.Context, status int, code, scopes, desc string) error {
	var parts []string
	if code != "" {
		parts = append(parts, fmt.Sprintf(`error=%q`, code))
	}
	if desc != "" {
		parts = append(parts, fmt.Sprintf(`error_description=%q`, desc))
	}
	parts = append(parts, fmt.Sprintf(`resource_metadata=%q`, r.metadataURL), fmt.Sprintf(`scope=%q`, scopes))
	c.Response().Header().Set("WWW-Authenticate", "Bearer "+strings.Join(parts, ", "))
	body := map[string]string{"error": code, "error_description": desc}
	if code == "" {
		body = map[string]string{"error": problem.CodeUnauthorized, "error_description": "a bearer token is required; see " + r.metadataURL}
	}
	return c.JSON(status, body)
}

func (r *router) originAllowed(origin string) bool {
	o := strings.ToLower(strings.TrimSuffix(origin, "/"))
	if o == r.selfOrigin || r.origins[o] {
		return true
	}
	if r.loopback {
		if u, err := url.Parse(o); err == nil && (u.Scheme == "http" || u.Scheme == "https") && loopback.Host(u.Hostname()) {
			return true
		}
	}
	return false
}

// hostAllowed guards a loopback resource against DNS rebinding: the Host
// must be the resource's own or another loopback name.
func (r *router) hostAllowed(host string) bool {
	return strings.EqualFold(host, r.resHost) || loopback.HostPort(host)
}

const exposeHeaders = "WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version, X-Request-Id, Retry-After"

func (r *router) cors(c echo.Context, origin string) {
	if origin == "" {
		return
	}
	h := c.Response().Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", exposeHeaders)
}

func (r *router) preflight(c echo.Context) error {
	origin := c.Request().Header.Get("Origin")
	if origin == "" || !r.originAllowed(origin) {
		return c.NoContent(http.StatusForbidden)
	}
	r.cors(c, origin)
	h := c.Response().Header()
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID, X-Request-Id")
	h.Set("Access-Control-Max-Age", "600")
	return c.NoContent(http.StatusNoContent)
}

// clientAddr is the address the access log stored in the request's
// context: Echo's RealIP through Options.ClientAddr.
func clientAddr(c echo.Context) string {
	if a := clientaddr.From(c.Request().Context()); a != "" {
		return a
	}
	return c.RealIP()
}

func (r *router) accessLog(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		info := &mcpInfo{}
		req := c.Request()
		addr := c.RealIP()
		ctx := clientaddr.With(context.WithValue(req.Context(), infoKey{}, info), addr)
		c.SetRequest(req.WithContext(ctx))
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		attrs := []any{"method", req.Method, "path", req.URL.Path, "status", c.Response().Status, "duration_ms", time.Since(start).Milliseconds(), "client_addr", addr}
		if info.method != "" {
			attrs = append(attrs, "rpc", info.method)
		}
		if info.tool != "" {
			attrs = append(attrs, "tool", info.tool)
		}
		if info.link != "" {
			attrs = append(attrs, "link_id", info.link)
		}
		r.o.Logger.InfoContext(c.Request().Context(), "request", attrs...)
		return nil
	}
}

// deadline gives the request's context the configured timeout: a database
// that stops answering ends the request with a retryable error instead of
// holding the caller.
func (r *router) deadline(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if r.o.Timeout <= 0 {
			return next(c)
		}
		req := c.Request()
		ctx, cancel := context.WithTimeout(req.Context(), r.o.Timeout)
		defer cancel()
		c.SetRequest(req.WithContext(ctx))
		return next(c)
	}
}

// errorHandler answers Echo's own errors (404, 405 from routing) as JSON
// and never leaks an internal message.
func (r *router) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code := http.StatusInternalServerError
	msg := problem.CodeServerError
	var he *echo.HTTPError
	if errors.As(err, &he) {
		code = he.Code
		msg = strings.ToLower(strings.ReplaceAll(http.StatusText(code), " ", "_"))
	} else {
		r.o.Logger.ErrorContext(c.Request().Context(), "handler error", "err", err)
	}
	_ = c.JSON(code, map[string]string{"error": msg})
}
