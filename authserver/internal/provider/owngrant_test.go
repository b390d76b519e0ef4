package provider

import (
	"context"
	"errors"
	"testing"

	"github.com/ory/fosite"
	"github.com/ory/fosite/handler/oauth2"
)

// codeOnly handles the authorization_code grant and records its calls.
type codeOnly struct{ populated int }

func (h *codeOnly) PopulateTokenEndpointResponse(context.Context, fosite.AccessRequester, fosite.AccessResponder) error {
	h.populated++
	return nil
}
func (h *codeOnly) HandleTokenEndpointRequest(context.Context, fosite.AccessRequester) error {
	return nil
}
func (h *codeOnly) CanSkipClientAuth(context.Context, fosite.AccessRequester) bool { return false }
func (h *codeOnly) CanHandleTokenEndpointRequest(_ context.Context, r fosite.AccessRequester) bool {
	return r.GetGrantTypes().ExactOne("authorization_code")
}

func request(grant string) *fosite.AccessRequest {
	r := fosite.NewAccessRequest(nil)
	r.GrantTypes = fosite.Arguments{grant}
	return r
}

// A handler asked to populate the response of a grant it does not handle
// answers fosite's ErrUnknownRequest itself, with no stack trace wrapped
// around it, and is not called; for its own grant it runs. fosite's own
// handler answers the same error, wrapped.
func TestOwnGrantOnly(t *testing.T) {
	ctx := context.Background()
	inner := &codeOnly{}
	h := ownGrantOnly{inner}
	if err := h.PopulateTokenEndpointResponse(ctx, request("refresh_token"), fosite.NewAccessResponse()); err != fosite.ErrUnknownRequest || inner.populated != 0 {
		t.Fatalf("refresh grant: %#v after %d calls, want fosite.ErrUnknownRequest itself and none", err, inner.populated)
	}
	if err := h.PopulateTokenEndpointResponse(ctx, request("authorization_code"), fosite.NewAccessResponse()); err != nil || inner.populated != 1 {
		t.Fatalf("code grant: %v after %d calls, want the handler to run once", err, inner.populated)
	}
	theirs := (&oauth2.AuthorizeExplicitGrantHandler{}).PopulateTokenEndpointResponse(ctx, request("refresh_token"), fosite.NewAccessResponse())
	if !errors.Is(theirs, fosite.ErrUnknownRequest) || theirs == fosite.ErrUnknownRequest {
		t.Fatalf("fosite's handler answered %#v; this wrapper exists because it wraps ErrUnknownRequest with a stack", theirs)
	}
}
