package consentui

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/linkslot/linkslot/internal/store"
)

// The activity page and the words for an operation.

type activityEntry struct {
	store.Activity
	ClientName string
}

type activityData struct {
	Entries []activityEntry
	Page    int
	HasMore bool
	PrevURL string
	NextURL string
}

func (u *UI) getActivity(w http.ResponseWriter, r *http.Request) {
	acct, _, ok := u.requireAccount(w, r)
	if !ok {
		return
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	p, err := u.id.Activity(r.Context(), acct.ID, page, u.perPage)
	if err != nil {
		u.serverError(w, r, err)
		return
	}
	names := map[string]string{}
	d := activityData{Page: p.Page, HasMore: p.HasMore}
	for _, a := range p.Entries {
		d.Entries = append(d.Entries, activityEntry{Activity: a, ClientName: u.clientName(r.Context(), names, a.ClientID)})
	}
	if p.Page > 1 {
		d.PrevURL = "/account/activity?page=" + strconv.Itoa(p.Page-1)
	}
	if p.HasMore {
		d.NextURL = "/account/activity?page=" + strconv.Itoa(p.Page+1)
	}
	u.render(w, r, http.StatusOK, "activity", view{Title: "Activity", Nav: "activity", Account: &acct, CSRF: u.CSRFToken(w, r), Data: d}, nil)
}

// toolWords names an Activity entry's operation; a web caller's carry the
// prefix "web:" (internal/mutation) and read the same.
func toolWords(tool string) string {
	switch strings.TrimPrefix(tool, "web:") {
	case "create_my_booking":
		return "Booked an appointment"
	case "reschedule_my_booking":
		return "Moved an appointment"
	case "cancel_my_booking":
		return "Cancelled an appointment"
	case "business:confirm":
		return "The business confirmed an appointment"
	case "business:decline":
		return "The business declined an appointment"
	case "business:expire":
		return "The business did not answer in time; the request was declined"
	case "business:cancel":
		return "The business cancelled an appointment"
	case "business:complete":
		return "The business marked an appointment completed"
	case "business:no_show":
		return "The business marked an appointment a no-show"
	}
	return strings.ReplaceAll(tool, "_", " ")
}
