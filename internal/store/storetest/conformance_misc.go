package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

func testIdempotency(t *testing.T, s store.Store) {
	rec := store.IdempotencyRecord{LinkID: "lnk", Tool: "book", Key: "k1", ArgsHash: "ah", CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour)}
	got, err := s.ClaimIdempotency(ctx, rec)
	must(t, err)
	if got.State != store.IdemPending || got.ArgsHash != "ah" {
		t.Errorf("ClaimIdempotency = %+v", got)
	}
	again := rec
	again.ArgsHash = "different"
	existing, err := s.ClaimIdempotency(ctx, again)
	wantErr(t, err, store.ErrAlreadyExists)
	if existing.ArgsHash != "ah" || existing.State != store.IdemPending {
		t.Errorf("existing record = %+v, want the first claim", existing)
	}
	sameInstant(t, "ExpiresAt", existing.ExpiresAt, t0.Add(24*time.Hour))
	// Same key under another tool or link is independent.
	_, err = s.ClaimIdempotency(ctx, store.IdempotencyRecord{LinkID: "lnk", Tool: "cancel", Key: "k1", ArgsHash: "x", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)})
	must(t, err)
	_, err = s.ClaimIdempotency(ctx, store.IdempotencyRecord{LinkID: "lnk2", Tool: "book", Key: "k1", ArgsHash: "x", CreatedAt: t0, ExpiresAt: t0.Add(48 * time.Hour)})
	must(t, err)

	must(t, s.CompleteIdempotency(ctx, "lnk", "book", "k1", []byte(`{"ok":true}`)))
	got, err = s.GetIdempotency(ctx, "lnk", "book", "k1")
	must(t, err)
	if got.State != store.IdemDone || string(got.Response) != `{"ok":true}` {
		t.Errorf("completed record = %+v", got)
	}
	wantErr(t, s.CompleteIdempotency(ctx, "lnk", "book", "missing", nil), store.ErrNotFound)
	_, err = s.GetIdempotency(ctx, "lnk", "book", "missing")
	wantErr(t, err, store.ErrNotFound)

	// Release removes only pending records.
	must(t, s.ReleaseIdempotency(ctx, "lnk", "book", "k1"))
	if _, err := s.GetIdempotency(ctx, "lnk", "book", "k1"); err != nil {
		t.Errorf("release removed a done record: %v", err)
	}
	must(t, s.ReleaseIdempotency(ctx, "lnk", "cancel", "k1"))
	_, err = s.GetIdempotency(ctx, "lnk", "cancel", "k1")
	wantErr(t, err, store.ErrNotFound)
	_, err = s.ClaimIdempotency(ctx, store.IdempotencyRecord{LinkID: "lnk", Tool: "cancel", Key: "k1", ArgsHash: "y", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)})
	must(t, err)

	n, err := s.PurgeIdempotency(ctx, t0.Add(30*time.Hour))
	must(t, err)
	if n != 2 {
		t.Errorf("PurgeIdempotency = %d, want 2", n)
	}
	if _, err := s.GetIdempotency(ctx, "lnk2", "book", "k1"); err != nil {
		t.Errorf("unexpired record purged: %v", err)
	}

	// A repeated claim inside a transaction does not spoil it.
	err = s.InTx(ctx, func(tx store.Store) error {
		if _, err := tx.ClaimIdempotency(ctx, store.IdempotencyRecord{LinkID: "lnk2", Tool: "book", Key: "k1", CreatedAt: t0, ExpiresAt: t0}); !errors.Is(err, store.ErrAlreadyExists) {
			return fmt.Errorf("claim in tx: %v", err)
		}
		return tx.AddAuditEvent(ctx, store.AuditEvent{ID: "aud_tx", ActorID: "cli", Action: "x", Target: "y", CreatedAt: t0})
	})
	must(t, err)
	if ev, _ := s.ListAuditEvents(ctx, 10, 0); len(ev) != 1 {
		t.Errorf("write after a repeated claim in a transaction was lost")
	}
}

func testIdempotencyConcurrent(t *testing.T, s store.Store) {
	errs := parallel(20, func(i int) error {
		_, err := s.ClaimIdempotency(ctx, store.IdempotencyRecord{LinkID: "lnk", Tool: "book", Key: "race",
			ArgsHash: fmt.Sprint(i), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)})
		return err
	})
	if ok, dup := count(errs, nil), count(errs, store.ErrAlreadyExists); ok != 1 || dup != len(errs)-1 {
		t.Fatalf("concurrent claims: %d claimed, %d ErrAlreadyExists, others %v", ok, dup, others(errs, store.ErrAlreadyExists))
	}
}

func testActivityAudit(t *testing.T, s store.Store) {
	for i := range 5 {
		must(t, s.AddActivity(ctx, store.Activity{AccountID: "acc_a", LinkID: "lnk", ClientID: "cli", Tool: "book",
			Arguments: []byte(`{"i":` + fmt.Sprint(i) + `}`), Summary: fmt.Sprint("s", i), ConfirmationText: "Book?",
			IdempotencyKey: fmt.Sprint("k", i), Outcome: []byte(`{}`), RequestID: "req", CreatedAt: t0.Add(time.Duration(i) * time.Minute)}))
	}
	must(t, s.AddActivity(ctx, store.Activity{ID: "act_other", AccountID: "acc_b", CreatedAt: t0}))
	got, err := s.ListActivity(ctx, "acc_a", 2, 0)
	must(t, err)
	if len(got) != 3 || got[0].Summary != "s4" || got[1].Summary != "s3" || got[2].Summary != "s2" {
		t.Fatalf("ListActivity page 1 = %+v", got)
	}
	if got[0].ID == "" || string(got[0].Arguments) != `{"i":4}` || got[0].IdempotencyKey != "k4" || got[0].ConfirmationText != "Book?" || string(got[0].Outcome) != "{}" ||
		got[0].Via != store.ViaAgent {
		t.Errorf("activity = %+v", got[0])
	}
	sameInstant(t, "activity CreatedAt", got[0].CreatedAt, t0.Add(4*time.Minute))
	got, _ = s.ListActivity(ctx, "acc_a", 2, 4)
	if len(got) != 1 || got[0].Summary != "s0" {
		t.Errorf("ListActivity last page = %+v", got)
	}

	for i := range 4 {
		must(t, s.AddAuditEvent(ctx, store.AuditEvent{ActorID: "acc_admin", Action: "client.create", Target: fmt.Sprint("cli_", i),
			Before: nil, After: []byte(`{"n":1}`), RequestID: "r", ClientAddr: "2001:db8::7", CreatedAt: t0.Add(time.Duration(i) * time.Second)}))
	}
	ev, err := s.ListAuditEvents(ctx, 2, 0)
	must(t, err)
	var targets []string
	for _, e := range ev {
		targets = append(targets, e.Target)
	}
	if !slices.Equal(targets, []string{"cli_3", "cli_2", "cli_1"}) {
		t.Errorf("ListAuditEvents = %v, want newest first, limit+1", targets)
	}
	if len(ev) > 0 && (ev[0].ID == "" || string(ev[0].After) != `{"n":1}` || len(ev[0].Before) != 0 || ev[0].ActorID != "acc_admin" || ev[0].ClientAddr != "2001:db8::7") {
		t.Errorf("audit event = %+v", ev[0])
	}
	ev, _ = s.ListAuditEvents(ctx, 2, 2)
	if len(ev) != 2 {
		t.Errorf("ListAuditEvents offset 2 = %d, want 2", len(ev))
	}
}

func testInTx(t *testing.T, s store.Store) {
	boom := errors.New("boom")
	err := s.InTx(ctx, func(tx store.Store) error {
		must(t, tx.CreateAccount(ctx, store.Account{ID: "acc_rb", Email: "rb@example.com", CreatedAt: t0, UpdatedAt: t0}))
		if _, err := tx.GetAccount(ctx, "acc_rb"); err != nil {
			t.Errorf("write not visible inside its transaction: %v", err)
		}
		return boom
	})
	wantErr(t, err, boom)
	_, err = s.GetAccount(ctx, "acc_rb")
	wantErr(t, err, store.ErrNotFound)

	must(t, s.InTx(ctx, func(tx store.Store) error {
		return tx.CreateAccount(ctx, store.Account{ID: "acc_ok", Email: "ok@example.com", CreatedAt: t0, UpdatedAt: t0})
	}))
	_, err = s.GetAccount(ctx, "acc_ok")
	must(t, err)

	// A sentinel from inside comes out as itself, and a failed statement
	// inside (a savepoint) does not spoil the rest of the transaction.
	err = s.InTx(ctx, func(tx store.Store) error {
		_, err := tx.GetAccount(ctx, "missing")
		return err
	})
	wantErr(t, err, store.ErrNotFound)
	c := putSample(t, s)
	must(t, s.InTx(ctx, func(tx store.Store) error {
		must(t, tx.InsertBooking(ctx, newBooking(c, "ana", "cut", at(10, 0), store.BookingConfirmed)))
		wantErr(t, tx.InsertBooking(ctx, newBooking(c, "ana", "cut", at(10, 10), store.BookingConfirmed)), store.ErrOverlap)
		wantErr(t, tx.CreateAccount(ctx, store.Account{ID: "acc_ok", Email: "dup@example.com", CreatedAt: t0, UpdatedAt: t0}), store.ErrAlreadyExists)
		return tx.CreateAccount(ctx, store.Account{ID: "acc_after", Email: "after@example.com", CreatedAt: t0, UpdatedAt: t0})
	}))
	if _, err := s.GetAccount(ctx, "acc_after"); err != nil {
		t.Errorf("write after a failed statement in a transaction: %v", err)
	}
	// An overlap between two transactions' bookings is caught too.
	err = s.InTx(ctx, func(tx store.Store) error {
		return tx.InsertBooking(ctx, newBooking(c, "ana", "cut", at(10, 20), store.BookingConfirmed))
	})
	wantErr(t, err, store.ErrOverlap)
}

func testPing(t *testing.T, s store.Store) {
	must(t, s.Ping(ctx))
	if d := s.Dialect(); d != "sqlite" && d != "postgres" {
		t.Errorf("Dialect = %q", d)
	}
}

// testFaults checks the suite's own fault injector on the backend: a fault
// after a booking write or a token batch leaves nothing of it, takes the
// enclosing transaction with it, and stops when cleared.
func testFaults(t *testing.T, s store.Store) {
	c := putSample(t, s)
	f := WithFaults(s)
	boom := errors.New("injected fault")
	f.FailAfterBookingWrite(boom)
	b1 := newBooking(c, "ana", "cut", at(10, 0), store.BookingConfirmed)
	wantErr(t, f.InsertBooking(ctx, b1), boom)
	_, err := s.GetBooking(ctx, b1.ID)
	wantErr(t, err, store.ErrNotFound)
	err = f.InTx(ctx, func(tx store.Store) error {
		must(t, tx.AddActivity(ctx, store.Activity{ID: "act_fault", AccountID: "acc_p", CreatedAt: t0}))
		return tx.InsertBooking(ctx, b1)
	})
	wantErr(t, err, boom)
	if l, _ := s.ListActivity(ctx, "acc_p", 10, 0); len(l) != 0 {
		t.Errorf("the transaction around a failed booking write kept %d activity entries", len(l))
	}
	f.FailAfterBookingWrite(nil)
	must(t, f.InsertBooking(ctx, b1))
	f.FailAfterBookingWrite(boom)
	_, err = f.UpdateBooking(ctx, b1.ID, func(b store.Booking) (store.Booking, error) { b.Notes = "moved"; b.Version++; return b, nil })
	wantErr(t, err, boom)
	if got, _ := s.GetBooking(ctx, b1.ID); got.Notes != "" || got.Version != 1 {
		t.Errorf("failed update kept: %+v", got)
	}
	f.FailAfterBookingWrite(nil)
	got, err := f.UpdateBooking(ctx, b1.ID, func(b store.Booking) (store.Booking, error) { b.Notes = "moved"; b.Version++; return b, nil })
	must(t, err)
	if got.Notes != "moved" || got.Version != 2 {
		t.Errorf("update after the fault cleared: %+v", got)
	}

	// A fault after a token batch, in a transaction from Begin, takes the
	// transaction's other writes with it.
	code := fastSession(store.KindAuthorizeCode, "cli_fault", "req_fault")
	f.FailAfterTokenWrite(boom)
	tx, err := f.Begin(ctx)
	must(t, err)
	must(t, tx.AddActivity(ctx, store.Activity{ID: "act_fault_tok", AccountID: "acc_p", CreatedAt: t0}))
	wantErr(t, tx.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{code}}), boom)
	must(t, tx.Rollback())
	_, err = s.GetTokenSession(ctx, code.Kind, code.SignatureHash)
	wantErr(t, err, store.ErrNotFound)
	if l, _ := s.ListActivity(ctx, "acc_p", 10, 0); len(l) != 0 {
		t.Errorf("the transaction around a failed token batch kept %d activity entries", len(l))
	}
	f.FailAfterTokenWrite(nil)
	tx, err = f.Begin(ctx)
	must(t, err)
	must(t, tx.ApplyTokenBatch(ctx, store.TokenBatch{Create: []store.TokenSession{code}}))
	must(t, tx.Commit())
	if _, err := s.GetTokenSession(ctx, code.Kind, code.SignatureHash); err != nil {
		t.Errorf("token batch after the fault cleared: %v", err)
	}
}
