package catalogfile

import (
	"encoding/json"
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/linkslot/linkslot/internal/problem"
	"github.com/linkslot/linkslot/internal/store"
	"github.com/linkslot/linkslot/internal/textcheck"
)

// Catalog file formats.
const (
	FormatJSON = "json"
	FormatYAML = "yaml"
)

// NormalizeFormat maps "json", "yaml", "yml" and media types such as
// "application/json" or "application/yaml; charset=utf-8" to FormatJSON or
// FormatYAML; anything else answers "".
func NormalizeFormat(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	switch s {
	case "json", "application/json", "text/json":
		return FormatJSON
	case "yaml", "yml", "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml":
		return FormatYAML
	}
	return ""
}

// ContentType is the media type of a catalog file in format (FormatJSON
// or FormatYAML), for an HTTP answer that carries one.
func ContentType(format string) string {
	if format == FormatYAML {
		return "application/yaml; charset=utf-8"
	}
	return "application/json"
}

// Problem is one mistake in a catalog file, with its path (such as
// businesses[2].staff[0].hours.monday[1]; empty for the whole file).
type Problem = problem.Problem

// invalidFile is the one refusal of a file: invalid_input listing every
// problem.
func invalidFile(ps []Problem) error {
	return problem.Invalid(problem.CodeInvalidInput, "the catalog file was refused", ps...)
}

// MaxProblems bounds the problems a refusal lists; past it, one
// last problem says how many more there were. Real files never get near it;
// it keeps a hostile or badly generated file from producing a huge answer.
const MaxProblems = 1000

// Defaults for policies a file leaves out.
const (
	DefaultSlotIntervalMinutes = 15
	DefaultHorizonDays         = 60
)

var (
	refPattern      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
	hoursPattern    = regexp.MustCompile(`^(\d\d):(\d\d)-(\d\d):(\d\d)$`)
)

// Weekdays in file order, with their keys.
var weekdays = []struct {
	Key string
	Day time.Weekday
}{
	{"monday", time.Monday}, {"tuesday", time.Tuesday}, {"wednesday", time.Wednesday},
	{"thursday", time.Thursday}, {"friday", time.Friday}, {"saturday", time.Saturday}, {"sunday", time.Sunday},
}

// MaxBusinesses bounds the businesses of one import (docs/reference.md §6),
// beside MaxFileBytes: past either, Parse answers request_too_large naming
// the limit, before anything is validated or written.
const MaxBusinesses = 10000

// Parse decodes and validates a catalog file. It returns every business or,
// when anything is wrong, a *problem.Error (invalid_input) whose Problems list every problem with its
// path; a file over MaxFileBytes or MaxBusinesses is request_too_large with
// the field ("file" or "businesses") named. An unknown format is an
// ordinary error.
func Parse(data []byte, format string) ([]store.Catalog, error) {
	f := NormalizeFormat(format)
	if f == "" {
		return nil, fmt.Errorf("unknown catalog format %q (want json or yaml)", format)
	}
	if len(data) > MaxFileBytes {
		return nil, problem.Newf(problem.CodeRequestTooLarge,
			"the catalog file is %d bytes; one import takes at most %d bytes (split the file and import each part)",
			len(data), MaxFileBytes).WithField("file")
	}
	tree, err := decodeTree(data, f)
	if err != nil {
		return nil, invalidFile([]Problem{{Message: err.Error()}})
	}
	if root, ok := tree.(map[string]any); ok {
		if list, ok := root["businesses"].([]any); ok && len(list) > MaxBusinesses {
			return nil, problem.Newf(problem.CodeRequestTooLarge,
				"the catalog file lists %d businesses; one import takes at most %d (split the file and import each part)",
				len(list), MaxBusinesses).WithField("businesses")
		}
	}
	p := &parser{}
	cats := p.file(tree)
	if n := len(p.problems); n > MaxProblems {
		p.problems = append(p.problems[:MaxProblems], Problem{Message: fmt.Sprintf("… and %d more problems", n-MaxProblems)})
	}
	if len(p.problems) > 0 {
		return nil, invalidFile(p.problems)
	}
	return cats, nil
}

type parser struct {
	problems []Problem
}

func (p *parser) add(path, format string, args ...any) {
	p.problems = append(p.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// obj walks one JSON object, remembering which keys were read so the rest
// can be reported as unknown.
type obj struct {
	p    *parser
	path string
	m    map[string]any
	read map[string]bool
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func (p *parser) object(v any, path string) *obj {
	m, ok := v.(map[string]any)
	if !ok {
		p.add(path, "must be an object, not %s", kind(v))
		return nil
	}
	return &obj{p: p, path: path, m: m, read: map[string]bool{}}
}

func kind(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("the text %q", clip(t))
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

func (o *obj) get(key string) (any, bool) {
	o.read[key] = true
	v, ok := o.m[key]
	if ok && v == nil {
		return nil, false // null is the same as absent
	}
	return v, ok
}

// done reports keys nobody asked for.
func (o *obj) done() {
	var unknown []string
	for k := range o.m {
		if !o.read[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		o.p.add(join(o.path, k), "unknown field")
	}
}

func (o *obj) str(key string, required bool) string {
	v, ok := o.get(key)
	if !ok {
		if required {
			o.p.add(join(o.path, key), "is required")
		}
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		o.p.add(join(o.path, key), "must be text, not %s", kind(v))
		return ""
	}
	s = strings.TrimSpace(s)
	if required && s == "" {
		o.p.add(join(o.path, key), "must not be empty")
	}
	limit, multiline := textLimit(key)
	s, err := textcheck.Text(s, limit, multiline)
	if err != nil {
		o.p.add(join(o.path, key), "%s", err.Error())
	}
	return s
}

// textLimit is the length limit and whether line breaks are allowed for a
// text field of the catalog file (docs/reference.md §4): descriptions and
// policy texts are multi-line, up to textcheck.PolicyMax characters; a
// booking URL up to 2000; every other field is a one-line name.
func textLimit(key string) (int, bool) {
	switch key {
	case "description", "cancellation_policy", "privacy_notice":
		return textcheck.PolicyMax, true
	case "booking_url":
		return 2000, false
	}
	return textcheck.NameMax, false
}

func (o *obj) boolean(key string, def bool) bool {
	v, ok := o.get(key)
	if !ok {
		return def
	}
	b, isBool := v.(bool)
	if !isBool {
		o.p.add(join(o.path, key), "must be true or false, not %s", kind(v))
		return def
	}
	return b
}

// integer reads a whole number in [lo, hi]; an absent key answers def,
// or a "required" problem when required.
func (o *obj) integer(key string, def, lo, hi int64, required bool) int64 {
	v, ok := o.get(key)
	path := join(o.path, key)
	if !ok {
		if required {
			o.p.add(path, "is required")
		}
		return def
	}
	n, isNum := v.(json.Number)
	if !isNum {
		o.p.add(path, "must be a whole number, not %s", kind(v))
		return def
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		o.p.add(path, "must be a whole number, not %s", clip(n.String()))
		return def
	}
	if i < lo || i > hi {
		switch {
		case lo == 1 && i < lo:
			o.p.add(path, "must be greater than 0, not %d", i)
		case lo == 0 && i < lo:
			o.p.add(path, "must not be negative, not %d", i)
		default:
			o.p.add(path, "must be between %d and %d, not %d", lo, hi, i)
		}
		return def
	}
	return i
}

func (o *obj) list(key string, required bool) ([]any, string) {
	path := join(o.path, key)
	v, ok := o.get(key)
	if !ok {
		if required {
			o.p.add(path, "is required")
		}
		return nil, path
	}
	l, isList := v.([]any)
	if !isList {
		o.p.add(path, "must be a list, not %s", kind(v))
		return nil, path
	}
	return l, path
}

func (p *parser) file(tree any) []store.Catalog {
	if tree == nil {
		p.add("", "the file is empty: it must hold an object with a businesses list")
		return nil
	}
	root := p.object(tree, "")
	if root == nil {
		return nil
	}
	list, path := root.list("businesses", true)
	root.done()
	if list == nil {
		return nil
	}
	if len(list) == 0 {
		p.add(path, "must list at least one business")
	}
	cats := make([]store.Catalog, 0, len(list))
	seen := map[string]int{}
	for i, v := range list {
		bp := index(path, i)
		c, ok := p.business(v, bp)
		if !ok {
			continue
		}
		if first, dup := seen[c.Business.Reference]; dup && c.Business.Reference != "" {
			p.add(join(bp, "reference"), "%q is already used by %s", c.Business.Reference, index(path, first))
		} else {
			seen[c.Business.Reference] = i
		}
		cats = append(cats, c)
	}
	return cats
}

func (p *parser) reference(o *obj, what string) string {
	ref := o.str("reference", true)
	if ref != "" && !refPattern.MatchString(ref) {
		p.add(join(o.path, "reference"), "%q is not a valid %s reference (1-64 letters, digits, '.', '_' or '-', starting with a letter or digit)", clip(ref), what)
	}
	return ref
}

func (p *parser) currency(o *obj, key string, required bool, def string) string {
	c := o.str(key, required)
	if c == "" {
		return def
	}
	if !currencyPattern.MatchString(c) {
		p.add(join(o.path, key), "%q is not a 3-letter ISO 4217 currency code in capitals (e.g. EUR)", clip(c))
	}
	return c
}

func (p *parser) business(v any, path string) (store.Catalog, bool) {
	o := p.object(v, path)
	if o == nil {
		return store.Catalog{}, false
	}
	b := store.Business{
		Reference:   p.reference(o, "business"),
		Name:        o.str("name", true),
		Description: o.str("description", false),
		Category:    o.str("category", true),
		City:        o.str("city", false),
		Address:     o.str("address", false),
		TimeZone:    o.str("timezone", true),
		BookingURL:  o.str("booking_url", false),
		// Where the business hears of bookings (docs/reference.md §11); optional.
		ContactEmail: o.str("contact_email", false),
	}
	if b.Category != "" && b.Category != store.CategoryAppointment && b.Category != store.CategoryRestaurant {
		p.add(join(path, "category"), "%q is not appointment or restaurant", clip(b.Category))
	}
	loc := time.UTC
	if b.TimeZone != "" {
		l, err := loadZone(b.TimeZone)
		if err != nil {
			p.add(join(path, "timezone"), "%q is not an IANA time zone (e.g. Europe/Lisbon)", clip(b.TimeZone))
		} else {
			loc = l
		}
	}
	b.Currency = p.currency(o, "currency", true, "")
	b.AgentBooking = o.boolean("agent_booking", false)
	if b.BookingURL != "" {
		if u, err := url.Parse(b.BookingURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			p.add(join(path, "booking_url"), "%q is not an absolute http(s) URL", clip(b.BookingURL))
		}
	}
	if b.ContactEmail != "" {
		if a, err := mail.ParseAddress(b.ContactEmail); err != nil || a.Address != b.ContactEmail || a.Name != "" {
			p.add(join(path, "contact_email"), "%q is not an e-mail address (name@example.com)", clip(b.ContactEmail))
		}
	}
	// Policies.
	b.SlotIntervalMinutes = DefaultSlotIntervalMinutes
	b.HorizonDays = DefaultHorizonDays
	if pv, ok := o.get("policies"); ok {
		if po := p.object(pv, join(path, "policies")); po != nil {
			b.MinNoticeMinutes = int(po.integer("min_notice_minutes", 0, 0, 366*24*60, false))
			// A restaurant is not booked through Linkslot, so its slot grid
			// and horizon may be 0; an appointment business needs both.
			lo := int64(1)
			if b.Category == store.CategoryRestaurant {
				lo = 0
			}
			b.HorizonDays = int(po.integer("horizon_days", DefaultHorizonDays, lo, 3660, false))
			b.SlotIntervalMinutes = int(po.integer("slot_interval_minutes", DefaultSlotIntervalMinutes, lo, 24*60, false))
			b.CancellationWindowMinutes = int(po.integer("cancellation_window_minutes", 0, 0, 366*24*60, false))
			b.CancellationFeeCents = po.integer("cancellation_fee_cents", 0, 0, 1e12, false)
			b.CancellationPolicy = po.str("cancellation_policy", false)
			b.PrivacyNotice = po.str("privacy_notice", false)
			// How long the business takes at most to answer a booking of a
			// service that requires its confirmation; 0 or absent: 24 hours.
			b.ConfirmationWindowMinutes = int(po.integer("confirmation_window_minutes", 0, 0, 30*24*60, false))
			po.done()
		}
	}
	c := store.Catalog{Business: b, StaffHours: map[string][]store.HoursWindow{}, StaffTimeOff: map[string][]store.TimeOff{}}
	if hv, ok := o.get("hours"); ok {
		c.OpeningHours = p.hours(hv, join(path, "hours"))
	}
	// Services.
	svcList, svcPath := o.list("services", false)
	svcSeen := map[string]int{}
	deposit := false
	for i, sv := range svcList {
		sp := index(svcPath, i)
		so := p.object(sv, sp)
		if so == nil {
			continue
		}
		s := store.Service{
			Reference:           p.reference(so, "service"),
			Name:                so.str("name", true),
			Description:         so.str("description", false),
			DurationMinutes:     int(so.integer("duration_minutes", 0, 1, 24*60, true)),
			PriceCents:          so.integer("price_cents", 0, 0, 1e12, false),
			Currency:            p.currency(so, "currency", false, b.Currency),
			BufferBeforeMinutes: int(so.integer("buffer_before_minutes", 0, 0, 24*60, false)),
			BufferAfterMinutes:  int(so.integer("buffer_after_minutes", 0, 0, 24*60, false)),
			DepositRequired:     so.boolean("deposit_required", false),
			// Bookings wait for the business to confirm them.
			RequiresConfirmation: so.boolean("requires_confirmation", false),
		}
		so.done()
		deposit = deposit || s.DepositRequired
		if first, dup := svcSeen[s.Reference]; dup && s.Reference != "" {
			p.add(join(sp, "reference"), "%q is already used by %s", s.Reference, index(svcPath, first))
		} else {
			svcSeen[s.Reference] = i
		}
		c.Services = append(c.Services, s)
	}
	if deposit && b.BookingURL == "" {
		p.add(join(path, "booking_url"), "is required because a service requires a deposit (agents send people there to pay)")
	}
	// Staff.
	stList, stPath := o.list("staff", false)
	stSeen := map[string]int{}
	for i, sv := range stList {
		sp := index(stPath, i)
		so := p.object(sv, sp)
		if so == nil {
			continue
		}
		st := store.Staff{Reference: p.reference(so, "staff"), Name: so.str("name", true), ServiceIDs: []string{}}
		refs, rp := so.list("services", true)
		performs := map[string]bool{}
		for j, rv := range refs {
			r, ok := rv.(string)
			if !ok {
				p.add(index(rp, j), "must be a service reference, not %s", kind(rv))
				continue
			}
			switch _, known := svcSeen[r]; {
			case !known:
				p.add(index(rp, j), "service %q is not among this business's services", clip(r))
			case performs[r]:
				p.add(index(rp, j), "service %q is listed twice", clip(r))
			default:
				performs[r] = true
				st.ServiceIDs = append(st.ServiceIDs, r)
			}
		}
		if hv, ok := so.get("hours"); ok {
			if h := p.hours(hv, join(sp, "hours")); len(h) > 0 && st.Reference != "" {
				c.StaffHours[st.Reference] = h
			}
		}
		offList, offPath := so.list("time_off", false)
		for j, ov := range offList {
			if t, ok := p.timeOff(ov, index(offPath, j), loc); ok && st.Reference != "" {
				c.StaffTimeOff[st.Reference] = append(c.StaffTimeOff[st.Reference], t)
			}
		}
		so.done()
		if first, dup := stSeen[st.Reference]; dup && st.Reference != "" {
			p.add(join(sp, "reference"), "%q is already used by %s", st.Reference, index(stPath, first))
		} else {
			stSeen[st.Reference] = i
		}
		c.Staff = append(c.Staff, st)
	}
	c.Credentials = p.credentials(o, path)
	o.done()
	return c, true
}

// credentials reads a business's self-reported credentials: each a kind
// (license, insurance or certification), a name, and optionally an issuer,
// a number and a valid-until date (YYYY-MM-DD). Absent: none, so an import
// without them clears the business's list.
func (p *parser) credentials(o *obj, path string) []store.Credential {
	out := []store.Credential{}
	list, lp := o.list("credentials", false)
	for i, v := range list {
		cp := index(lp, i)
		co := p.object(v, cp)
		if co == nil {
			continue
		}
		c := store.Credential{Kind: co.str("kind", true), Name: co.str("name", true), Issuer: co.str("issuer", false),
			Number: co.str("number", false), ValidUntil: co.str("valid_until", false)}
		co.done()
		switch c.Kind {
		case "", store.CredentialLicense, store.CredentialInsurance, store.CredentialCertification:
		default:
			p.add(join(cp, "kind"), "%q is not license, insurance or certification", clip(c.Kind))
		}
		if c.ValidUntil != "" {
			if d, err := time.Parse("2006-01-02", c.ValidUntil); err != nil || !inRange(d) {
				p.add(join(cp, "valid_until"), "%q is not a date YYYY-MM-DD", clip(c.ValidUntil))
			}
		}
		out = append(out, c)
	}
	return out
}

// loadZone loads an IANA zone, refusing the names that mean "this machine".
func loadZone(name string) (*time.Location, error) {
	if name == "Local" || strings.HasPrefix(name, "/") || strings.Contains(name, "..") {
		return nil, fmt.Errorf("not an IANA zone")
	}
	return time.LoadLocation(name)
}

// hours reads {monday: ["09:00-12:00", ...], ...}: well-formed windows, not
// overlapping within a day, sorted by start.
func (p *parser) hours(v any, path string) []store.HoursWindow {
	o := p.object(v, path)
	if o == nil {
		return nil
	}
	var out []store.HoursWindow
	for _, wd := range weekdays {
		list, lp := o.list(wd.Key, false)
		var day []store.HoursWindow
		at := map[int]int{} // start minute → index in the file, for messages
		for i, iv := range list {
			ip := index(lp, i)
			s, ok := iv.(string)
			if !ok {
				p.add(ip, "must be a \"HH:MM-HH:MM\" text, not %s", kind(iv))
				continue
			}
			start, end, err := ParseWindow(s)
			if err != nil {
				p.add(ip, "%q %s", clip(s), err.Error())
				continue
			}
			day = append(day, store.HoursWindow{Weekday: wd.Day, StartMin: start, EndMin: end})
			at[len(day)-1] = i
		}
		idx := make([]int, len(day))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return day[idx[a]].StartMin < day[idx[b]].StartMin })
		sorted := make([]store.HoursWindow, len(day))
		for k, i := range idx {
			sorted[k] = day[i]
			if k > 0 && sorted[k-1].EndMin > day[i].StartMin {
				prev := idx[k-1]
				p.add(index(lp, at[i]), "%s overlaps %s", FormatWindow(day[i].StartMin, day[i].EndMin), FormatWindow(day[prev].StartMin, day[prev].EndMin))
			}
		}
		out = append(out, sorted...)
	}
	o.done()
	return out
}

// ParseWindow parses "HH:MM-HH:MM" into minutes after local midnight; the
// end may be 24:00 and must be after the start.
func ParseWindow(s string) (start, end int, err error) {
	m := hoursPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, 0, fmt.Errorf("is not HH:MM-HH:MM")
	}
	n := func(x string) int { i, _ := strconv.Atoi(x); return i }
	sh, sm, eh, em := n(m[1]), n(m[2]), n(m[3]), n(m[4])
	if sh > 23 || sm > 59 || eh > 24 || em > 59 || (eh == 24 && em != 0) {
		return 0, 0, fmt.Errorf("is not HH:MM-HH:MM")
	}
	start, end = sh*60+sm, eh*60+em
	if end <= start {
		return 0, 0, fmt.Errorf("ends before it starts")
	}
	return start, end, nil
}

// FormatWindow formats minutes after midnight as "HH:MM-HH:MM".
func FormatWindow(start, end int) string {
	return fmt.Sprintf("%02d:%02d-%02d:%02d", start/60, start%60, end/60, end%60)
}

func (p *parser) timeOff(v any, path string, loc *time.Location) (store.TimeOff, bool) {
	o := p.object(v, path)
	if o == nil {
		return store.TimeOff{}, false
	}
	before := len(p.problems)
	t := store.TimeOff{Reason: o.str("reason", false)}
	startsAt, endsAt := o.str("starts_at", false), o.str("ends_at", false)
	fromDate, toDate := o.str("from_date", false), o.str("to_date", false)
	instants := startsAt != "" || endsAt != ""
	dates := fromDate != "" || toDate != ""
	o.done()
	switch {
	case instants && dates:
		p.add(path, "give either starts_at and ends_at or from_date and to_date, not both")
	case instants:
		s, err1 := time.Parse(time.RFC3339, startsAt)
		e, err2 := time.Parse(time.RFC3339, endsAt)
		if startsAt == "" {
			p.add(join(path, "starts_at"), "is required with ends_at")
		} else if err1 != nil {
			p.add(join(path, "starts_at"), "%q is not an RFC 3339 instant (e.g. 2026-12-24T09:00:00+01:00)", clip(startsAt))
		}
		if endsAt == "" {
			p.add(join(path, "ends_at"), "is required with starts_at")
		} else if err2 != nil {
			p.add(join(path, "ends_at"), "%q is not an RFC 3339 instant (e.g. 2026-12-24T18:00:00+01:00)", clip(endsAt))
		}
		if err1 == nil && err2 == nil && startsAt != "" && endsAt != "" {
			if !inRange(s) || !inRange(e) {
				p.add(path, "instants must fall between the years %d and %d", minYear, maxYear)
			} else if !e.After(s) {
				p.add(join(path, "ends_at"), "must be after starts_at")
			}
			t.StartsAt, t.EndsAt = store.UTC(s), store.UTC(e)
		}
	case dates:
		s, err1 := time.ParseInLocation(time.DateOnly, fromDate, loc)
		e, err2 := time.ParseInLocation(time.DateOnly, toDate, loc)
		if fromDate == "" {
			p.add(join(path, "from_date"), "is required with to_date")
		} else if err1 != nil {
			p.add(join(path, "from_date"), "%q is not a YYYY-MM-DD date", clip(fromDate))
		}
		if toDate == "" {
			p.add(join(path, "to_date"), "is required with from_date")
		} else if err2 != nil {
			p.add(join(path, "to_date"), "%q is not a YYYY-MM-DD date", clip(toDate))
		}
		if err1 == nil && err2 == nil && fromDate != "" && toDate != "" {
			if !inRange(s) || !inRange(e) {
				p.add(path, "dates must fall between the years %d and %d", minYear, maxYear)
			} else if e.Before(s) {
				p.add(join(path, "to_date"), "must not be before from_date")
			}
			// Local midnight of from_date to local midnight after to_date.
			y, m, d := e.Date()
			t.StartsAt = store.UTC(s)
			t.EndsAt = store.UTC(time.Date(y, m, d+1, 0, 0, 0, 0, loc))
		}
	default:
		p.add(path, "give starts_at and ends_at (RFC 3339) or from_date and to_date (YYYY-MM-DD, inclusive)")
	}
	return t, len(p.problems) == before
}

// Time off must fall in these years; outside them zones have offsets with
// seconds and dates nobody means.
const minYear, maxYear = 1970, 9998

func inRange(t time.Time) bool { y := t.UTC().Year(); return y >= minYear && y <= maxYear }
