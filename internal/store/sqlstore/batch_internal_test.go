package sqlstore

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// TestTokenBatchStatementKeptText holds TokenBatchStatement, whose text is
// kept by the batch's shape, to the statement and arguments buildTokenBatch
// writes for the same batch, for every shape up to the limit and beyond it,
// asked twice (written, then kept).
func TestTokenBatchStatementKeptText(t *testing.T) {
	at := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	ref := func(p string, i int) store.TokenRef {
		return store.TokenRef{Kind: store.KindRefreshToken, SignatureHash: fmt.Sprintf("%s-%d", p, i)}
	}
	for _, shape := range []batchShape{{0, 0, 1, 0, false}, {1, 0, 2, 0, false}, {1, 2, 2, 0, false}, {0, 0, 3, 0, false},
		{0, 1, 0, 0, false}, {2, 0, 0, 0, false}, {1, 1, 1, 0, false}, {1, 0, 2, 0, true}, {0, 0, 1, 1, false}, {1, 0, 1, 2, true},
		{batchTextLimit, batchTextLimit, batchTextLimit, batchTextLimit, true}, {batchTextLimit + 1, 0, 1, 0, false},
		{0, 0, batchTextLimit + 3, 0, false}, {0, 0, 1, batchTextLimit + 1, false}} {
		for round := 0; round < 2; round++ {
			var b store.TokenBatch
			for i := 0; i < shape.deactivate; i++ {
				b.Deactivate = append(b.Deactivate, ref(fmt.Sprintf("d%d", round), i))
			}
			for i := 0; i < shape.require; i++ {
				b.Require = append(b.Require, ref(fmt.Sprintf("q%d", round), i))
			}
			if shape.rotation {
				b.Rotation = &store.Rotation{At: at.Add(time.Duration(round) * time.Second), Successor: []byte{byte(round), 1, 2}}
			}
			for i := 0; i < shape.delete; i++ {
				b.Delete = append(b.Delete, ref(fmt.Sprintf("x%d", round), i))
			}
			for i := 0; i < shape.create; i++ {
				b.Create = append(b.Create, store.TokenSession{Kind: store.KindAccessToken, SignatureHash: fmt.Sprintf("c%d-%d", round, i),
					RequestID: "req", ClientID: "client", AccountID: "acct", LinkID: "link", Active: i%2 == 0,
					Request: []byte(fmt.Sprintf(`{"n":%d}`, i)), ExpiresAt: at.Add(time.Duration(i) * time.Minute), CreatedAt: at})
			}
			q, args := TokenBatchStatement(b)
			wantQ, wantArgs := buildTokenBatch(b)
			if q != wantQ {
				t.Fatalf("shape %+v, round %d: text\n%s\nwant\n%s", shape, round, q, wantQ)
			}
			if !reflect.DeepEqual(args, wantArgs) {
				t.Fatalf("shape %+v, round %d: arguments\n%v\nwant\n%v", shape, round, args, wantArgs)
			}
		}
	}
}
