package storetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// day is a Monday in the future, in UTC.
var day = time.Date(2030, 3, 4, 0, 0, 0, 0, time.UTC)

func at(h, m int) time.Time {
	return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}

// sampleCatalog is a business with two services and two staff, referenced
// by reference (the way imports describe them).
func sampleCatalog(ref, name, city string, agent bool, services ...string) store.Catalog {
	c := store.Catalog{
		Business: store.Business{Reference: ref, Name: name, Category: store.CategoryAppointment, City: city,
			TimeZone: "Europe/Lisbon", AgentBooking: agent, Currency: "EUR", HorizonDays: 30, SlotIntervalMinutes: 15},
		OpeningHours: []store.HoursWindow{{Weekday: time.Monday, StartMin: 540, EndMin: 720}, {Weekday: time.Monday, StartMin: 780, EndMin: 1080}},
		Services: []store.Service{
			{Reference: "cut", Name: "Haircut", DurationMinutes: 30, PriceCents: 2500, Currency: "EUR", BufferAfterMinutes: 10},
			{Reference: "color", Name: "Colour", DurationMinutes: 60, PriceCents: 6000, Currency: "EUR", BufferBeforeMinutes: 5, DepositRequired: true},
		},
		Staff: []store.Staff{
			{Reference: "ana", Name: "Ana", ServiceIDs: []string{"cut", "color"}},
			{Reference: "ben", Name: "Ben", ServiceIDs: []string{"cut"}},
		},
		StaffHours: map[string][]store.HoursWindow{
			"ana": {{Weekday: time.Monday, StartMin: 540, EndMin: 1020}},
			"ben": {{Weekday: time.Tuesday, StartMin: 600, EndMin: 900}},
		},
		StaffTimeOff: map[string][]store.TimeOff{
			"ben": {{StartsAt: at(24, 0), EndsAt: at(48, 0), Reason: "leave"}},
		},
	}
	for _, sv := range services {
		c.Services = append(c.Services, store.Service{Reference: strings.ReplaceAll(sv, " ", "-"), Name: sv, DurationMinutes: 30, Currency: "EUR"})
	}
	return c
}

func putSample(t testing.TB, s store.Store) store.Catalog {
	t.Helper()
	c, err := s.PutCatalog(ctx, sampleCatalog("studio", "Hair Studio", "Lisbon", true))
	must(t, err)
	return c
}

func svcByRef(c store.Catalog, ref string) store.Service {
	for _, s := range c.Services {
		if s.Reference == ref {
			return s
		}
	}
	panic("no service " + ref)
}

func staffByRef(c store.Catalog, ref string) store.Staff {
	for _, s := range c.Staff {
		if s.Reference == ref {
			return s
		}
	}
	panic("no staff " + ref)
}

func testCatalog(t *testing.T, s store.Store) {
	in := sampleCatalog("untouched", "Untouched", "Lisbon", true)
	if _, err := s.PutCatalog(ctx, in); err != nil {
		t.Fatal(err)
	}
	if in.Business.ID != "" || in.Services[0].ID != "" || in.Staff[0].ServiceIDs[0] != "cut" || in.StaffTimeOff["ben"][0].ID != "" {
		t.Errorf("PutCatalog changed the caller's catalog: %+v", in)
	}
	put := putSample(t, s)
	if put.Business.ID == "" || svcByRef(put, "cut").ID == "" || staffByRef(put, "ana").ID == "" {
		t.Fatalf("PutCatalog returned no ids: %+v", put)
	}
	c, err := s.LoadCatalog(ctx, "studio")
	must(t, err)
	b := c.Business
	if b.ID != put.Business.ID || b.Name != "Hair Studio" || b.City != "Lisbon" || !b.AgentBooking || b.HorizonDays != 30 || b.TimeZone != "Europe/Lisbon" {
		t.Errorf("business = %+v", b)
	}
	if len(c.OpeningHours) != 2 || c.OpeningHours[0].StartMin != 540 || c.OpeningHours[1].StartMin != 780 {
		t.Errorf("opening hours = %+v", c.OpeningHours)
	}
	cut, color := svcByRef(c, "cut"), svcByRef(c, "color")
	if cut.ID != svcByRef(put, "cut").ID || cut.BusinessID != b.ID || cut.BufferAfterMinutes != 10 || color.BufferBeforeMinutes != 5 || !color.DepositRequired || color.PriceCents != 6000 {
		t.Errorf("services = %+v", c.Services)
	}
	ana, ben := staffByRef(c, "ana"), staffByRef(c, "ben")
	wantSvcs := []string{cut.ID, color.ID}
	slices.Sort(wantSvcs)
	gotSvcs := slices.Clone(ana.ServiceIDs)
	slices.Sort(gotSvcs)
	if !slices.Equal(gotSvcs, wantSvcs) || !slices.Equal(ben.ServiceIDs, []string{cut.ID}) {
		t.Errorf("staff services: ana %v ben %v, want %v and [%s]", ana.ServiceIDs, ben.ServiceIDs, wantSvcs, cut.ID)
	}
	if h := c.StaffHours[ana.ID]; len(h) != 1 || h[0].Weekday != time.Monday || h[0].EndMin != 1020 {
		t.Errorf("ana hours = %+v", h)
	}
	if o := c.StaffTimeOff[ben.ID]; len(o) != 1 || o[0].Reason != "leave" || o[0].StaffID != ben.ID {
		t.Errorf("ben time off = %+v", o)
	} else {
		sameInstant(t, "time off start", o[0].StartsAt, at(24, 0))
	}
	byID, err := s.LoadCatalogByID(ctx, b.ID)
	must(t, err)
	if byID.Business.Reference != "studio" || len(byID.Staff) != 2 {
		t.Errorf("LoadCatalogByID = %+v", byID.Business)
	}
	_, err = s.LoadCatalog(ctx, "missing")
	wantErr(t, err, store.ErrNotFound)
	_, err = s.LoadCatalogByID(ctx, "biz_missing")
	wantErr(t, err, store.ErrNotFound)
	gb, err := s.GetBusiness(ctx, "studio")
	must(t, err)
	if gb.ID != b.ID {
		t.Errorf("GetBusiness id = %s", gb.ID)
	}
	_, err = s.GetBusiness(ctx, "missing")
	wantErr(t, err, store.ErrNotFound)

	// A booking on ana/cut; re-putting by reference keeps every id.
	bk := newBooking(c, "ana", "cut", at(10, 0), store.BookingConfirmed)
	must(t, s.InsertBooking(ctx, bk))
	again := sampleCatalog("studio", "Hair Studio Renamed", "Lisbon", true)
	again.StaffHours["ana"] = []store.HoursWindow{{Weekday: time.Friday, StartMin: 600, EndMin: 660}}
	re, err := s.PutCatalog(ctx, again)
	must(t, err)
	if re.Business.ID != b.ID || svcByRef(re, "cut").ID != cut.ID || staffByRef(re, "ana").ID != ana.ID {
		t.Errorf("re-put changed ids: %+v", re)
	}
	c2, err := s.LoadCatalog(ctx, "studio")
	must(t, err)
	if c2.Business.Name != "Hair Studio Renamed" || c2.StaffHours[ana.ID][0].Weekday != time.Friday || len(c2.StaffHours[ana.ID]) != 1 {
		t.Errorf("re-put not applied: %+v %+v", c2.Business.Name, c2.StaffHours[ana.ID])
	}
	sameInstant(t, "business CreatedAt kept", c2.Business.CreatedAt, c.Business.CreatedAt)

	// Removing a service or a staff member that has bookings is a conflict
	// and changes nothing.
	noCut := sampleCatalog("studio", "Changed", "Lisbon", true)
	noCut.Services = noCut.Services[1:]
	noCut.Staff = noCut.Staff[:1]
	noCut.Staff[0].ServiceIDs = []string{"color"}
	_, err = s.PutCatalog(ctx, noCut)
	wantErr(t, err, store.ErrConflict)
	noAna := sampleCatalog("studio", "Changed", "Lisbon", true)
	noAna.Staff = noAna.Staff[1:]
	_, err = s.PutCatalog(ctx, noAna)
	wantErr(t, err, store.ErrConflict)
	c3, err := s.LoadCatalog(ctx, "studio")
	must(t, err)
	if c3.Business.Name != "Hair Studio Renamed" || len(c3.Services) != 2 || len(c3.Staff) != 2 {
		t.Errorf("failed PutCatalog changed data: %s, %d services, %d staff", c3.Business.Name, len(c3.Services), len(c3.Staff))
	}
	// Removing ones without bookings works.
	noColor := sampleCatalog("studio", "Hair Studio", "Lisbon", true)
	noColor.Services = noColor.Services[:1]
	noColor.Staff[0].ServiceIDs = []string{"cut"}
	noColor.Staff = noColor.Staff[:1]
	_, err = s.PutCatalog(ctx, noColor)
	must(t, err)
	c4, _ := s.LoadCatalog(ctx, "studio")
	if len(c4.Services) != 1 || len(c4.Staff) != 1 || len(c4.StaffTimeOff[ben.ID]) != 0 {
		t.Errorf("after removal: %d services, %d staff", len(c4.Services), len(c4.Staff))
	}
	if _, err := s.GetBooking(ctx, bk.ID); err != nil {
		t.Errorf("booking lost: %v", err)
	}
	// Unknown service reference in staff is rejected.
	bad := sampleCatalog("studio", "Hair Studio", "Lisbon", true)
	bad.Staff[1].ServiceIDs = []string{"nope"}
	if _, err := s.PutCatalog(ctx, bad); err == nil {
		t.Error("PutCatalog accepted staff with an unknown service")
	}

	// ListBusinesses and SetAgentBooking.
	_, err = s.PutCatalog(ctx, sampleCatalog("another", "Another", "Porto", false))
	must(t, err)
	list, err := s.ListBusinesses(ctx)
	must(t, err)
	if len(list) != 3 || list[0].Reference != "another" || list[1].Reference != "studio" || list[2].Reference != "untouched" {
		t.Errorf("ListBusinesses = %+v", list)
	}
	on, err := s.SetAgentBooking(ctx, "another", true)
	must(t, err)
	if !on.AgentBooking {
		t.Error("SetAgentBooking(true) not applied")
	}
	off, err := s.SetAgentBooking(ctx, "another", false)
	must(t, err)
	if off.AgentBooking {
		t.Error("SetAgentBooking(false) not applied")
	}
	_, err = s.SetAgentBooking(ctx, "missing", true)
	wantErr(t, err, store.ErrNotFound)
}

func testSearch(t *testing.T, s store.Store) {
	for _, c := range []store.Catalog{
		sampleCatalog("b-substr", "Best Hair Place", "Lisbon", true),
		sampleCatalog("b-exact", "Hair", "lisbon", true),
		sampleCatalog("b-prefix", "Hair Salon Lux", "Porto", true),
		sampleCatalog("b-service", "Barber Co", "LISBON", true, "hair trim"),
		sampleCatalog("b-off", "Hair", "Lisbon", false), // not agent-enabled
		sampleCatalog("b-pct", "100% Nails", "Faro", true),
		sampleCatalog("b-1000", "1000 Nails", "Faro", true),
		sampleCatalog("b-under", "a_b Spa", "Faro", true),
		sampleCatalog("b-axb", "axb Spa", "Faro", true),
		sampleCatalog("u-aaa", "Aaa Élan", "Évora", true),
		sampleCatalog("u-elan", "Élan", "ÉVORA", true),
	} {
		if c.Business.Reference == "b-service" || c.Business.Reference == "b-pct" || c.Business.Reference == "b-1000" ||
			c.Business.Reference == "b-under" || c.Business.Reference == "b-axb" ||
			c.Business.Reference == "u-aaa" || c.Business.Reference == "u-elan" {
			// keep "hair" out of their service names
			c.Services[0].Name = "Trim"
			if c.Business.Reference == "b-service" {
				c.Services[0].Name = "Hair Trim"
			}
		}
		_, err := s.PutCatalog(ctx, c)
		must(t, err)
	}
	// A restaurant with agent booking on is still not bookable by an agent:
	// search never returns it.
	rest := sampleCatalog("b-rest", "Hair Bistro", "Lisbon", true)
	rest.Business.Category = store.CategoryRestaurant
	_, err := s.PutCatalog(ctx, rest)
	must(t, err)
	// Every sample has a "Haircut" service except where replaced above;
	// b-pct, b-1000, b-under and b-axb have "Trim" and "Colour".
	refs := func(q store.BusinessQuery) []string {
		t.Helper()
		got, err := s.SearchBusinesses(ctx, q)
		must(t, err)
		var out []string
		for _, b := range got {
			if !b.AgentBooking {
				t.Errorf("search returned %s, which is not agent-enabled", b.Reference)
			}
			if b.Category != store.CategoryAppointment {
				t.Errorf("search returned %s, a %s", b.Reference, b.Category)
			}
			out = append(out, b.Reference)
		}
		return out
	}
	check := func(name string, q store.BusinessQuery, want []string) {
		t.Helper()
		if got := refs(q); !slices.Equal(got, want) {
			t.Errorf("%s: SearchBusinesses(%+v) = %v, want %v", name, q, got, want)
		}
	}
	check("ranking", store.BusinessQuery{Text: "HAIR", Limit: 10}, []string{"b-exact", "b-prefix", "b-substr", "b-service"})
	check("city", store.BusinessQuery{Text: "hair", City: "lisbon", Limit: 10}, []string{"b-exact", "b-substr", "b-service"})
	// Several words: no name starts with the whole text, so those with the
	// first word in the name, then the others, by name.
	check("every word", store.BusinessQuery{Text: "hair lisbon", Limit: 10}, []string{"b-substr", "b-exact", "b-service"})
	check("page 1", store.BusinessQuery{Text: "hair", Limit: 2}, []string{"b-exact", "b-prefix", "b-substr"})
	check("page 2", store.BusinessQuery{Text: "hair", Limit: 2, Offset: 2}, []string{"b-substr", "b-service"})
	// Punctuation separates words: "100%" is the word 100, which begins
	// "100" and "1000"; "a_b" is the words a and b.
	check("percent separates", store.BusinessQuery{Text: "100%", Limit: 10}, []string{"b-pct", "b-1000"})
	check("underscore separates", store.BusinessQuery{Text: "a_b", Limit: 10}, []string{"b-under"})
	check("backslash separates", store.BusinessQuery{Text: `hair\`, Limit: 10}, []string{"b-exact", "b-prefix", "b-substr", "b-service"})
	check("no match", store.BusinessQuery{Text: "yoga", Limit: 10}, nil)
	// Unicode folds the same on every backend.
	check("unicode exact first", store.BusinessQuery{Text: "ÉLAN", Limit: 10}, []string{"u-elan", "u-aaa"})
	check("unicode city", store.BusinessQuery{Text: "élan", City: "évora", Limit: 10}, []string{"u-elan", "u-aaa"})
	if got := refs(store.BusinessQuery{Limit: 100}); len(got) != 10 {
		t.Errorf("empty text returned %d businesses, want the 10 agent-enabled ones", len(got))
	}
	testSearchRelevance(t, s, check)
}

// testSearchRelevance: what people type is not always what the catalog
// says (docs/design.md, "Business search"): accents and case fold, a word
// prefix finds the word from one letter on, and a misspelled word that
// finds nothing is answered with the catalog's spelling.
func testSearchRelevance(t *testing.T, s store.Store, check func(string, store.BusinessQuery, []string)) {
	for _, c := range []store.Catalog{
		sampleCatalog("r-cafe", "Café Beleza", "Braga", true, "Manicure"),
		sampleCatalog("r-barber", "Zé's Barber", "Braga", true, "Beard trim"),
		sampleCatalog("r-barber-off", "Barber Closed", "Braga", false),
		sampleCatalog("r-quiet", "Quiet Room", "Coimbra", true),
	} {
		_, err := s.PutCatalog(ctx, c)
		must(t, err)
	}
	check("cafe finds Café", store.BusinessQuery{Text: "cafe", Limit: 10}, []string{"r-cafe"})
	check("CAFÉ finds Café", store.BusinessQuery{Text: "CAFÉ", Limit: 10}, []string{"r-cafe"})
	check("barb finds Barber", store.BusinessQuery{Text: "barb", Limit: 10}, []string{"b-service", "r-barber"})
	check("one letter", store.BusinessQuery{Text: "q", Limit: 10}, []string{"r-quiet"})
	check("two letters in a city", store.BusinessQuery{Text: "be", City: "BRAGA", Limit: 10}, []string{"r-cafe", "r-barber"})
	check("one letter in a city", store.BusinessQuery{Text: "z", City: "braga", Limit: 10}, []string{"r-barber"})
	check("city folds", store.BusinessQuery{Text: "quiet", City: "coímbra", Limit: 10}, []string{"r-quiet"})
	check("not in that city", store.BusinessQuery{Text: "quiet", City: "braga", Limit: 10}, nil)
	check("barbr finds nothing", store.BusinessQuery{Text: "barbr", Limit: 10}, nil)
	suggest := func(q store.BusinessQuery, want []string) {
		t.Helper()
		got, err := s.SuggestSearches(ctx, q)
		must(t, err)
		if !slices.Equal(got, want) {
			t.Errorf("SuggestSearches(%+v) = %q, want %q", q, got, want)
		}
	}
	suggest(store.BusinessQuery{Text: "barbr"}, []string{"barber"})
	suggest(store.BusinessQuery{Text: "Zé brabes"}, []string{"ze barber"})
	suggest(store.BusinessQuery{Text: "barbr", City: "Coimbra"}, nil) // no barber there
	suggest(store.BusinessQuery{Text: "closed"}, nil)                 // only in a business search never shows
	suggest(store.BusinessQuery{Text: "xyzzy"}, nil)
	// Switching agent booking on or off takes a business in and out of search.
	_, err := s.SetAgentBooking(ctx, "r-quiet", false)
	must(t, err)
	check("agent booking off", store.BusinessQuery{Text: "quiet", Limit: 10}, nil)
	_, err = s.SetAgentBooking(ctx, "r-quiet", true)
	must(t, err)
	check("agent booking on again", store.BusinessQuery{Text: "quiet", Limit: 10}, []string{"r-quiet"})
}
