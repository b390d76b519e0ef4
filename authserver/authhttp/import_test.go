package authhttp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/authserver/authhttp"
	"github.com/linkslot/linkslot/internal/admin"
	"github.com/linkslot/linkslot/internal/admin/adminapi"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
	"github.com/linkslot/linkslot/internal/testkit"
)

const importToken = "import-admin-token-0123456789"

// importEnv is the authorization server with the admin API mounted, whose
// request deadline is one second: shorter than a large import takes.
func importEnv(t *testing.T) *env { return importEnvWith(t, sqltest.SQLite(t), time.Second) }

// importEnvWith is importEnv on s with a request deadline of timeout (0:
// the default, config.DefaultRequestTimeout).
func importEnvWith(t testing.TB, s *sqlstore.Store, timeout time.Duration) *env {
	svc, err := admin.New(admin.Config{Store: s})
	if err != nil {
		t.Fatal(err)
	}
	return newEnvWith(t, s, func(d *authhttp.Deps) {
		d.Config.RequestTimeout = timeout
		d.Mount = func(mux *http.ServeMux) {
			mux.Handle(adminapi.Prefix, adminapi.NewAPI(svc, adminapi.NewTokenAuth(importToken), nil))
		}
	})
}

func postCatalog(t testing.TB, e *env, file []byte) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/admin/api/catalog", strings.NewReader(string(file)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+importToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%d: not JSON: %.300s", resp.StatusCode, raw)
	}
	return resp.StatusCode, m
}

// TestLargeImport: a 5,000-business catalog (about 5 MB) imports through
// the admin API although it takes longer than the request deadline: the
// import route has a deadline of its own (docs/reference.md §6), and every
// business is there afterwards.
func TestLargeImport(t *testing.T) {
	e := importEnv(t)
	code, m := postCatalog(t, e, testkit.CatalogFile(5000))
	if code != http.StatusOK {
		t.Fatalf("import: %d %v", code, m["error"])
	}
	if got := len(m["imported"].([]any)); got != 5000 {
		t.Errorf("answer lists %d imported businesses, want 5000", got)
	}
	bs, err := e.s.ListBusinesses(context.Background())
	if err != nil || len(bs) != 5000 {
		t.Fatalf("%d businesses stored (%v), want 5000", len(bs), err)
	}
	c, err := e.s.LoadCatalog(context.Background(), "biz-04999")
	if err != nil || len(c.Services) != 2 || len(c.Staff) != 2 {
		t.Errorf("the last business: %+v %v", c, err)
	}
}

// TestImportOverLimit: a file of more businesses than one import takes
// answers 413 request_too_large naming the limit, and writes nothing.
func TestImportOverLimit(t *testing.T) {
	e := importEnv(t)
	var b strings.Builder
	b.WriteString(`{"businesses":[`)
	for i := range 10000 + 1 { // one more than the documented limit
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"reference":"b` + strconv.Itoa(i) + `","name":"B","category":"appointment","timezone":"UTC","currency":"EUR"}`)
	}
	b.WriteString("]}")
	code, m := postCatalog(t, e, []byte(b.String()))
	er, _ := m["error"].(map[string]any)
	if code != http.StatusRequestEntityTooLarge || er["code"] != "request_too_large" {
		t.Fatalf("over the limit: %d %v, want 413 request_too_large", code, m)
	}
	if msg, _ := er["message"].(string); !strings.Contains(msg, "at most 10000") {
		t.Errorf("message %q does not name the limit", msg)
	}
	if bs, _ := e.s.ListBusinesses(context.Background()); len(bs) != 0 {
		t.Errorf("a refused import wrote %d businesses", len(bs))
	}
}
