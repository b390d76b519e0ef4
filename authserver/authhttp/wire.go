package authhttp

import (
	"context"
	"net/http"

	consentui "github.com/linkslot/linkslot/consent-ui"
	businessui "github.com/linkslot/linkslot/consent-ui/business"
	"github.com/linkslot/linkslot/internal/app"
	"github.com/linkslot/linkslot/internal/consent"
	"github.com/linkslot/linkslot/internal/mail"
	"github.com/linkslot/linkslot/internal/mutation"
)

// Wiring is what Wire needs besides Deps.
type Wiring struct {
	// Services tunes the services Wire builds (app.NewAuthServices); its
	// Clock, Logger and Metrics default to Deps'.
	Services app.ServiceOptions
	// Mount, when set, returns routes that need the consent UI or the
	// services (the admin pages and API), added to the server's mux.
	Mount func(ui *consentui.UI, svc *app.AuthServices) (func(*http.ServeMux), error)
	// UI, when set, replaces the consent UI's pages (a test's scripted
	// UI); approvals are then recorded without e-mail.
	UI consent.AuthorizeUI
}

// Wire is the authorization server as production wires it, the one place
// its parts are built: the services once (app.NewAuthServices: one
// outbox, identity, passkey, booking engine, mutation service and feed
// service), the consent UI's pages over them, and the handler (New). The
// outbox worker runs until ctx ends. Deps.UI, Pages, Approvals and Feeds
// are set here (Mount's ui is nil with Wiring.UI); the rest of Deps is
// New's. It returns the UI too, for routes served beside the handler.
func Wire(ctx context.Context, d Deps, w Wiring) (http.Handler, *consentui.UI, error) {
	o := w.Services
	if o.Clock == nil {
		o.Clock = d.Clock
	}
	if o.Logger == nil {
		o.Logger = d.Logger
	}
	if o.Metrics == nil {
		o.Metrics = d.Metrics.Registry()
	}
	svc, err := app.NewAuthServices(d.Config, d.Store, o)
	if err != nil {
		return nil, nil, err
	}
	d.Feeds = svc.Feeds
	var ui *consentui.UI
	if w.UI != nil {
		d.UI = w.UI
	} else {
		var devMail string
		if !d.Config.Production && d.Config.Mail.Kind == mail.KindDir {
			devMail = "/dev/mail" // New mounts it in development
		}
		if ui, err = consentui.New(consentui.Config{Store: d.Store, SecretKey: d.Config.SecretKey, Issuer: d.Config.Issuer,
			Logger: d.Logger, Clock: d.Clock, DevMailURL: devMail}.WithServices(svc)); err != nil {
			return nil, nil, err
		}
		d.UI, d.Pages, d.Approvals = ui, ui, svc.Identity.Approvals()
		// The business console (docs/reference.md §16), over the same
		// sessions and the process's one mutation service.
		// Its Calendars page calls the admin service over this process's
		// calendar service (docs/calendars.md).
		var cals businessui.Calendars
		if svc.Notifications.Calendars != nil {
			adm, err := svc.AdminService(d.Config, d.Store, nil)
			if err != nil {
				return nil, nil, err
			}
			cals = adm
		}
		console, err := businessui.New(businessui.Config{Service: svc.Business, Actions: businessui.MutationActions{Mutations: svc.Mutations},
			Callbacks: svc.Callbacks, Calendars: cals, UI: ui, Logger: d.Logger, Clock: d.Clock})
		if err != nil {
			return nil, nil, err
		}
		prev := d.Mount
		d.Mount = func(mux *http.ServeMux) {
			if prev != nil {
				prev(mux)
			}
			mux.Handle("/business", console)
			mux.Handle("/business/", console)
		}
	}
	if w.Mount != nil {
		more, err := w.Mount(ui, svc)
		if err != nil {
			return nil, nil, err
		}
		if prev := d.Mount; prev != nil {
			d.Mount = func(mux *http.ServeMux) { prev(mux); more(mux) }
		} else {
			d.Mount = more
		}
	}
	h, err := New(ctx, d)
	if err != nil {
		return nil, nil, err
	}
	go svc.Notifications.Worker.Run(ctx)
	if c := svc.Notifications.Calendars; c != nil {
		go c.Run(ctx) // connected calendars, synced every 10 minutes (docs/calendars.md)
	}
	if d.Leases != nil {
		x, err := mutation.NewExpirer(mutation.Expirer{Service: svc.Mutations, Leases: d.Leases, Clock: d.Clock, Logger: d.Logger})
		if err != nil {
			return nil, nil, err
		}
		go x.Run(ctx)
	}
	return h, ui, nil
}
