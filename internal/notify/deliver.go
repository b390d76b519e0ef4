package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/linkslot/linkslot/internal/mail"
	"github.com/linkslot/linkslot/internal/outbox"
	"github.com/linkslot/linkslot/internal/store"
)

// MailDeliverer delivers e-mail outbox messages through s.
func MailDeliverer(s mail.Sender) outbox.Deliverer {
	return outbox.DeliverFunc(func(ctx context.Context, m store.OutboxMessage) outbox.Result {
		var msg mail.Message
		if err := json.Unmarshal(m.Payload, &msg); err != nil || msg.To == "" {
			return outbox.Result{Err: errors.New("the stored e-mail cannot be read"), Permanent: true}
		}
		if err := s.Send(ctx, msg); err != nil {
			return outbox.Result{Err: fmt.Errorf("send: %w", err)}
		}
		return outbox.Result{OK: true}
	})
}

// Unavailable is the deliverer of a channel this process cannot deliver
// (webhooks without a secret key): the attempt fails and is retried, by
// this process or another.
func Unavailable(why string) outbox.Deliverer {
	return outbox.DeliverFunc(func(context.Context, store.OutboxMessage) outbox.Result {
		return outbox.Result{Err: errors.New(why)}
	})
}
