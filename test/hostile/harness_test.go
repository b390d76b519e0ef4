package hostile

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/authserver/authhttp"
	consentui "github.com/linkslot/linkslot/consent-ui"
	adminui "github.com/linkslot/linkslot/consent-ui/admin"
	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/admin/adminapi"
	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/booking"
	"github.com/linkslot/linkslot/internal/config"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/resourceserver/rshttp"
	"github.com/linkslot/linkslot/test/cluster"
)

const secret = "hostile-secret-key-hostile-secret-key-0123"

// sys is the authorization server with the real consent pages and the
// resource server, in process, on one SQLite store, with one linked agent.
type sys struct {
	t        *testing.T
	ctx      context.Context
	store    *sqlstore.Store
	as, rs   *httptest.Server
	resource string
	agent    *cluster.Agent
	asProc   *cluster.Proc
	rsProc   *cluster.Proc
}

func newSys(t *testing.T) *sys { return newSysOn(t, sqltest.SQLite(t)) }

// newSysOn builds the servers on s (sqltest.Each gives SQLite and
// PostgreSQL).
func newSysOn(t *testing.T, s *sqlstore.Store) *sys {
	t.Helper()
	ctx := context.Background()
	if _, err := demo.Load(ctx, s, demo.Data{Password: cluster.DemoPassword, Hash: cluster.CheapHash,
		Catalogs: booking.DemoCatalogs(store.SystemClock())}); err != nil {
		t.Fatal(err)
	}
	x := &sys{t: t, ctx: ctx, store: s}
	var asH, rsH http.Handler
	x.as = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asH.ServeHTTP(w, r) }))
	t.Cleanup(x.as.Close)
	x.rs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rsH.ServeHTTP(w, r) }))
	t.Cleanup(x.rs.Close)
	x.resource = x.rs.URL + "/mcp"
	cfg := config.Config{Issuer: x.as.URL, Resource: x.resource, SecretKey: []byte(secret),
		RefreshIdle: 30 * 24 * time.Hour, RefreshAbsolute: 90 * 24 * time.Hour}
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("LINKSLOT_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	// The production wiring of authserver's Handler: admin pages and API.
	svc, err := admin.New(admin.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	mount := func(ui *consentui.UI, _ *app.AuthServices) (func(*http.ServeMux), error) {
		pages, err := adminui.New(svc, ui, log)
		if err != nil {
			return nil, err
		}
		api := adminapi.NewAPI(svc, adminapi.AnyOf{adminapi.NewSessionAuth(ui)}, log)
		return func(mux *http.ServeMux) {
			mux.Handle(adminapi.Prefix, api)
			mux.Handle("/admin", pages)
			mux.Handle("/admin/", pages)
		}, nil
	}
	if asH, _, err = authhttp.Wire(ctx, authhttp.Deps{Store: s, Config: cfg, Logger: log}, authhttp.Wiring{Mount: mount}); err != nil {
		t.Fatal(err)
	}
	if rsH, err = rshttp.New(ctx, rshttp.Deps{Store: s, Config: cfg, Logger: log, NoRateLimits: true}); err != nil {
		t.Fatal(err)
	}
	x.asProc = &cluster.Proc{Name: "as", Base: x.as.URL}
	x.rsProc = &cluster.Proc{Name: "rs", Base: x.rs.URL}
	if x.agent, err = cluster.Link(ctx, x.asProc, demo.AccountEmail, cluster.DemoPassword); err != nil {
		t.Fatalf("link the demo agent: %v", err)
	}
	return x
}

// call posts a tools/call with the agent's token and classifies it.
func (x *sys) call(tool string, args any) cluster.Answer {
	return cluster.Call(x.ctx, x.agent.HTTP, x.rsProc, x.agent.Token.AccessToken, tool, args)
}

// rawMCP posts body to /mcp with the given Authorization header values.
func (x *sys) rawMCP(body []byte, auth ...string) (int, string) {
	req, _ := http.NewRequest(http.MethodPost, x.resource, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, a := range auth {
		req.Header.Add("Authorization", a)
	}
	resp, err := x.agent.HTTP.Do(req)
	if err != nil {
		x.t.Fatalf("POST /mcp: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// alive checks the servers still answer a normal call.
func (x *sys) alive() {
	x.t.Helper()
	if a := x.call("search_my_bookings", map[string]any{}); a.Kind != "ok" {
		x.t.Fatalf("the resource server no longer answers normally: %s (%d)", a.Kind, a.Status)
	}
	resp, err := http.Get(x.as.URL + "/jwks.json")
	if err != nil || resp.StatusCode != 200 {
		x.t.Fatalf("the authorization server no longer answers: %v", err)
	}
	resp.Body.Close()
}

func toolsCall(name string, args any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	return b
}

// claims of the agent's access token, decoded without verification.
func (x *sys) claims() map[string]any {
	parts := strings.Split(x.agent.Token.AccessToken, ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		x.t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// nextDay is a date a few days ahead in New York, where the demo barber is.
func nextDay(days int) string {
	loc, _ := time.LoadLocation("America/New_York")
	return time.Now().In(loc).AddDate(0, 0, days).Format("2006-01-02")
}

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
