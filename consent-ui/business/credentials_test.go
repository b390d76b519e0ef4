package businessui_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/business"
	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestCredentialsReachTheAgent: the owner adds a credential on the console's
// Credentials page and edits it; check_business_availability's catalog
// answer (the resource server's, on the same store) returns it as
// self-reported with the date of the edit. Bad input lists every problem
// and changes nothing; a form showing a list someone else changed since
// says so and changes nothing; every change is audited.
func TestCredentialsReachTheAgent(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		ctx := context.Background()
		agent := e.linkAgent()
		owner := e.signIn(demo.OwnerEmail)
		page := "/business/" + demo.MemberBusiness + "/credentials"
		credentials := func() map[string]any {
			t.Helper()
			out, isErr := agent.call("check_business_availability", map[string]any{"business_reference": demo.MemberBusiness})
			if isErr {
				t.Fatalf("check_business_availability: %v", out)
			}
			cat, _ := out["catalog"].(map[string]any)
			biz, _ := cat["business"].(map[string]any)
			creds, _ := biz["self_reported_credentials"].(map[string]any)
			return creds
		}
		version := func() string {
			cs, err := s.ListCredentials(ctx, e.cat.Business.ID)
			if err != nil {
				t.Fatal(err)
			}
			return business.CredentialsVersion(cs)
		}
		audits := func() int {
			evs, err := s.ListAuditEvents(ctx, 1000, 0)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, ev := range evs {
				if ev.Action == "business.credentials" {
					n++
				}
			}
			return n
		}
		if c := credentials(); c != nil {
			t.Fatalf("Brightcut lists credentials before any: %v", c)
		}

		// Bad input: every problem listed, nothing changed.
		resp, body := owner.post(page, url.Values{"version": {version()}, "kind": {"diploma"}, "name": {"  "},
			"number": {strings.Repeat("7", 201)}, "valid_until": {"30/06/2027"}})
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("bad input: %d\n%s", resp.StatusCode, body)
		}
		for _, want := range []string{"Choose a kind", "Give the credential&#39;s name", "The number is 201 characters long", "valid-until date"} {
			if !strings.Contains(body, want) {
				t.Errorf("bad input: the page does not say %q\n%s", want, body)
			}
		}
		if cs, _ := s.ListCredentials(ctx, e.cat.Business.ID); len(cs) != 0 || audits() != 0 {
			t.Fatalf("bad input changed something: %+v", cs)
		}

		// Added, then shown on the page and to the agent.
		before := time.Now().Add(-time.Second)
		resp, body = owner.post(page, url.Values{"version": {version()}, "kind": {"insurance"}, "name": {"Public liability insurance"},
			"issuer": {"Aviva"}, "number": {"PL-88213"}, "valid_until": {"2027-03-31"}})
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("add: %d\n%s", resp.StatusCode, body)
		}
		if _, body = owner.get(page); !strings.Contains(body, "Public liability insurance") || !strings.Contains(body, "PL-88213") {
			t.Fatalf("the page does not list the credential:\n%s", body)
		}
		c := credentials()
		items, _ := c["items"].([]any)
		if c["note"] != "Reported by the business; Linkslot has not verified them." || len(items) != 1 ||
			items[0].(map[string]any)["name"] != "Public liability insurance" || items[0].(map[string]any)["valid_until"] != "2027-03-31" {
			t.Fatalf("after the add: %v", c)
		}
		added, err := time.Parse(time.RFC3339Nano, c["updated_at"].(string))
		if err != nil || added.Before(before) || added.After(time.Now()) {
			t.Fatalf("updated_at after the add: %v (%v)", c["updated_at"], err)
		}

		// A stale form: someone else changes the list after the page was
		// shown; the form says so and changes nothing.
		stale := version()
		if err := s.ReplaceCredentials(ctx, e.cat.Business.ID, []store.Credential{{Kind: "insurance", Name: "Public liability insurance",
			Issuer: "Aviva", Number: "PL-88213", ValidUntil: "2027-03-31", UpdatedAt: added.Add(time.Millisecond)}}); err != nil {
			t.Fatal(err)
		}
		n := audits()
		resp, body = owner.post(page+"/1", url.Values{"version": {stale}, "kind": {"insurance"}, "name": {"Stale edit"}})
		if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "Someone else changed the credentials") {
			t.Fatalf("stale form: %d\n%s", resp.StatusCode, body)
		}
		if cs, _ := s.ListCredentials(ctx, e.cat.Business.ID); len(cs) != 1 || cs[0].Name != "Public liability insurance" || audits() != n {
			t.Fatalf("a stale form changed the list: %+v", cs)
		}

		// Edited: the agent sees the new text and a later date.
		time.Sleep(20 * time.Millisecond)
		resp, body = owner.post(page+"/1", url.Values{"version": {version()}, "kind": {"insurance"}, "name": {"Public liability insurance"},
			"issuer": {"Aviva"}, "number": {"PL-99001"}, "valid_until": {"2028-03-31"}})
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("edit: %d\n%s", resp.StatusCode, body)
		}
		c = credentials()
		items, _ = c["items"].([]any)
		edited, _ := time.Parse(time.RFC3339Nano, c["updated_at"].(string))
		if len(items) != 1 || items[0].(map[string]any)["number"] != "PL-99001" || items[0].(map[string]any)["valid_until"] != "2028-03-31" ||
			!edited.After(added) {
			t.Fatalf("after the edit: %v (added %v)", c, added)
		}

		// Removed: the agent sees none.
		if resp, body = owner.post(page+"/1/remove", url.Values{"version": {version()}}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("remove: %d\n%s", resp.StatusCode, body)
		}
		if c := credentials(); c != nil {
			t.Fatalf("after the remove: %v", c)
		}
		if got := audits(); got != 3 {
			t.Fatalf("business.credentials audit events: %d, want 3 (add, edit, remove)", got)
		}
	})
}
