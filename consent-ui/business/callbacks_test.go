package businessui_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/demo"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/store/sqlstore"
	"github.com/linkslot/linkslot/internal/store/sqlstore/sqltest"
)

// TestCallbackInbox: the Callbacks page lists the business's open callback
// requests with the person's name and verified address (never another
// business's); Mark done closes one, audits it and queues the person's
// e-mail; marking it again changes nothing.
func TestCallbackInbox(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		e := newEnv(t, s)
		ctx := context.Background()
		person, err := s.GetAccountByEmail(ctx, outsiderEmail)
		if err != nil {
			t.Fatal(err)
		}
		other, _ := s.GetBusiness(ctx, otherBusiness)
		now := time.Now().UTC()
		for _, r := range []store.CallbackRequest{
			{ID: store.NewID("cbr"), Reference: "CB-MINE", BusinessID: e.cat.Business.ID, AccountID: person.ID, Topic: "A quote for six",
				PreferredTimes: "mornings", Status: store.CallbackOpen, CreatedAt: now},
			{ID: store.NewID("cbr"), Reference: "CB-THEIRS", BusinessID: other.ID, AccountID: person.ID, Topic: "Elsewhere",
				Status: store.CallbackOpen, CreatedAt: now},
		} {
			if err := s.InsertCallbackRequest(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		owner := e.signIn(demo.OwnerEmail)
		base := "/business/" + demo.MemberBusiness + "/callbacks"
		_, body := owner.get(base)
		for _, want := range []string{"CB-MINE", "A quote for six", "mornings", outsiderEmail, "Mark done"} {
			if !strings.Contains(body, want) {
				t.Errorf("inbox lacks %q", want)
			}
		}
		if strings.Contains(body, "CB-THEIRS") {
			t.Error("inbox shows another business's request")
		}
		resp, _ := owner.post(base+"/CB-THEIRS/done", nil)
		if got, _ := s.ListCallbackRequests(ctx, other.ID, store.CallbackOpen, 10); resp.StatusCode != 303 || len(got) != 1 {
			t.Fatalf("marking another business's request: %d, %d open", resp.StatusCode, len(got))
		}
		resp, _ = owner.post(base+"/CB-MINE/done", nil)
		if resp.StatusCode != 303 {
			t.Fatalf("mark done: %d", resp.StatusCode)
		}
		if got, _ := s.ListCallbackRequests(ctx, e.cat.Business.ID, store.CallbackDone, 10); len(got) != 1 || got[0].DoneBy == "" {
			t.Fatalf("done requests: %+v", got)
		}
		msgs, err := s.ListMessages(ctx, store.OutboxFilter{Channel: store.ChannelEmail, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		told := 0
		for _, m := range msgs {
			if m.Topic == "callback.done" && m.Recipient == outsiderEmail {
				told++
			}
		}
		if told != 1 {
			t.Fatalf("%d e-mails telling the person, want 1", told)
		}
		_, body = owner.get(base)
		if strings.Contains(body, "CB-MINE") {
			t.Error("a done request is still listed")
		}
	})
}
