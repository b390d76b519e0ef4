package booking

import (
	"slices"
	"time"

	"github.com/linkslot/linkslot/internal/store"
)

// weekly returns the same windows on each of the given weekdays.
func weekly(days []time.Weekday, windows ...[2]int) []store.HoursWindow {
	var out []store.HoursWindow
	for _, d := range days {
		for _, w := range windows {
			out = append(out, store.HoursWindow{Weekday: d, StartMin: w[0], EndMin: w[1]})
		}
	}
	return out
}

func hm(h, m int) int { return h*60 + m }

var (
	monFri = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
	tueSat = []time.Weekday{time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday}
	monSat = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday}
	allWk  = []time.Weekday{time.Sunday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday}
)

const demoPrivacy = "Your name, email and any notes you add are shared with the business so it can manage this appointment."

// demoDayOff is how many days after the seeding day Marcus Reid's day off
// falls (DemoCatalogs).
const demoDayOff = 10

// DemoBarberDay is the New York date (YYYY-MM-DD), at least days after
// now's, on which the demo barbers are open and both who cut hair (Marcus
// Reid and Dana Kowalski) work: Tuesday to Saturday, and not within a day
// of Marcus Reid's day off (so a catalog seeded a little before now
// agrees). Tests and benchmarks that look for open slots use it rather
// than a fixed number of days ahead, whose weekday changes with the day
// they run: three days after a Thursday is a Sunday, when Marcus Reid is
// off, and after a Friday a Monday, when the shop is closed.
func DemoBarberDay(now time.Time, days int) string {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		ny = time.UTC
	}
	local := now.In(ny)
	for d := days; ; d++ {
		day := time.Date(local.Year(), local.Month(), local.Day()+d, 12, 0, 0, 0, ny)
		// tueSat: Marcus Reid's days, and Dana Kowalski's but Sunday.
		if slices.Contains(tueSat, day.Weekday()) && (d < demoDayOff-1 || d > demoDayOff+1) {
			return day.Format("2006-01-02")
		}
	}
}

// DemoCatalogs returns the demo businesses (docs/reference.md §8): seven businesses in
// four time zones (New York and London observe DST, Sydney too, Tokyo does
// not), among them a restaurant, a business with agent booking off and a
// service that requires a deposit. Hours are weekly, so every coming week has
// open slots; now only places one staff member's time off (a day off ten
// days ahead). References are stable and human-readable; staff services,
// hours and time off are keyed by reference, as store.PutCatalog matches
// them.
func DemoCatalogs(now time.Time) []store.Catalog {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		ny = time.UTC
	}
	local := now.In(ny)
	dayOff := time.Date(local.Year(), local.Month(), local.Day()+demoDayOff, 0, 0, 0, 0, ny) // a whole local day
	dayOffEnd := time.Date(local.Year(), local.Month(), local.Day()+demoDayOff+1, 0, 0, 0, 0, ny)
	return []store.Catalog{
		{
			Business: store.Business{Reference: "biz-brightcut-barbers", Name: "Brightcut Barbers",
				Description: "Classic cuts, skin fades and hot-towel shaves in Park Slope.",
				Category:    store.CategoryAppointment, City: "New York", Address: "214 7th Avenue, Brooklyn, NY 11215, USA",
				TimeZone: "America/New_York", AgentBooking: true, MinNoticeMinutes: 60, HorizonDays: 60, SlotIntervalMinutes: 15,
				CancellationWindowMinutes: 24 * 60, CancellationFeeCents: 1500, Currency: "USD",
				CancellationPolicy: "Free cancellation up to 24 hours before your appointment; later cancellations are charged a USD 15.00 fee.",
				PrivacyNotice:      demoPrivacy, BookingURL: "https://brightcut.example/book", ContactEmail: "frontdesk@brightcut.example"},
			OpeningHours: append(weekly(tueSat, [2]int{hm(9, 0), hm(19, 0)}), weekly([]time.Weekday{time.Sunday}, [2]int{hm(10, 0), hm(16, 0)})...),
			Services: []store.Service{
				{Reference: "svc-classic-haircut", Name: "Classic haircut", Description: "Scissor or clipper cut, wash and style.", DurationMinutes: 30, PriceCents: 3500, Currency: "USD", BufferAfterMinutes: 5},
				{Reference: "svc-skin-fade", Name: "Skin fade", Description: "Fade down to the skin with a detailed finish.", DurationMinutes: 45, PriceCents: 4500, Currency: "USD", BufferAfterMinutes: 5},
				{Reference: "svc-hot-towel-shave", Name: "Hot-towel shave", Description: "Straight-razor shave with hot towels.", DurationMinutes: 40, PriceCents: 4000, Currency: "USD", BufferBeforeMinutes: 5, BufferAfterMinutes: 10},
				{Reference: "svc-beard-trim", Name: "Beard trim", DurationMinutes: 20, PriceCents: 2000, Currency: "USD"},
			},
			Staff: []store.Staff{
				{Reference: "stf-marcus-reid", Name: "Marcus Reid", ServiceIDs: []string{"svc-classic-haircut", "svc-skin-fade", "svc-beard-trim"}},
				{Reference: "stf-dana-kowalski", Name: "Dana Kowalski", ServiceIDs: []string{"svc-classic-haircut", "svc-hot-towel-shave", "svc-beard-trim"}},
				{Reference: "stf-luis-ortega", Name: "Luis Ortega", ServiceIDs: []string{"svc-skin-fade", "svc-hot-towel-shave"}},
			},
			StaffHours: map[string][]store.HoursWindow{
				"stf-marcus-reid": weekly(tueSat, [2]int{hm(9, 0), hm(17, 0)}),
				// Dana works a split shift: mornings and evenings.
				"stf-dana-kowalski": append(weekly(tueSat, [2]int{hm(9, 0), hm(12, 30)}, [2]int{hm(15, 0), hm(19, 0)}),
					weekly([]time.Weekday{time.Sunday}, [2]int{hm(10, 0), hm(16, 0)})...),
				"stf-luis-ortega": weekly([]time.Weekday{time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday}, [2]int{hm(11, 0), hm(19, 0)}),
			},
			StaffTimeOff: map[string][]store.TimeOff{
				"stf-marcus-reid": {{StartsAt: store.UTC(dayOff), EndsAt: store.UTC(dayOffEnd), Reason: "Personal day"}},
			},
		},
		{
			Business: store.Business{Reference: "biz-thames-physio", Name: "Thames Physiotherapy Clinic",
				Description: "Chartered physiotherapists for sports injuries, back and neck pain.",
				Category:    store.CategoryAppointment, City: "London", Address: "48 Borough High Street, London SE1 1XN, United Kingdom",
				TimeZone: "Europe/London", AgentBooking: true, MinNoticeMinutes: 120, HorizonDays: 45, SlotIntervalMinutes: 30,
				CancellationWindowMinutes: 48 * 60, CancellationFeeCents: 3000, Currency: "GBP",
				CancellationPolicy: "Please give 48 hours' notice to cancel; later cancellations and missed appointments are charged GBP 30.00.",
				PrivacyNotice:      "Your name, contact details and notes are shared with your physiotherapist and kept in your clinical record.",
				BookingURL:         "https://thamesphysio.example/book", ContactEmail: "reception@thamesphysio.example"},
			OpeningHours: weekly(monFri, [2]int{hm(8, 0), hm(20, 0)}),
			Services: []store.Service{
				{Reference: "svc-initial-assessment", Name: "Initial assessment", Description: "First visit: history, examination and treatment plan.", DurationMinutes: 60, PriceCents: 7500, Currency: "GBP", BufferAfterMinutes: 15},
				{Reference: "svc-follow-up", Name: "Follow-up session", DurationMinutes: 30, PriceCents: 5000, Currency: "GBP", BufferAfterMinutes: 10},
				{Reference: "svc-sports-massage", Name: "Sports massage (90 min)", Description: "Deep-tissue sports massage; a deposit is taken when booking.", DurationMinutes: 90, PriceCents: 9500, Currency: "GBP", BufferAfterMinutes: 15, DepositRequired: true},
			},
			Staff: []store.Staff{
				{Reference: "stf-priya-shah", Name: "Priya Shah", ServiceIDs: []string{"svc-initial-assessment", "svc-follow-up"}},
				{Reference: "stf-tom-hargreaves", Name: "Tom Hargreaves", ServiceIDs: []string{"svc-follow-up", "svc-sports-massage"}},
			},
			StaffHours: map[string][]store.HoursWindow{
				"stf-priya-shah":     weekly(monFri, [2]int{hm(8, 0), hm(16, 0)}),
				"stf-tom-hargreaves": weekly(monFri, [2]int{hm(12, 0), hm(20, 0)}),
			},
			// Self-reported: shown by check_business_availability as the
			// business's own statement (docs/reference.md).
			Credentials: []store.Credential{
				{Kind: store.CredentialLicense, Name: "HCPC registration (physiotherapists)", Issuer: "Health and Care Professions Council", Number: "PH123456", ValidUntil: "2027-04-30"},
				{Kind: store.CredentialInsurance, Name: "Professional and public liability insurance", Issuer: "Chartered Society of Physiotherapy"},
				{Kind: store.CredentialCertification, Name: "Sports massage level 4", Issuer: "ITEC"},
			},
		},
		{
			Business: store.Business{Reference: "biz-harbour-massage", Name: "Harbour Massage & Wellness",
				Description: "Remedial and relaxation massage near Circular Quay.",
				Category:    store.CategoryAppointment, City: "Sydney", Address: "12 Alfred Street, Sydney NSW 2000, Australia",
				TimeZone: "Australia/Sydney", AgentBooking: true, MinNoticeMinutes: 30, HorizonDays: 30, SlotIntervalMinutes: 30,
				CancellationWindowMinutes: 12 * 60, CancellationFeeCents: 2500, Currency: "AUD",
				CancellationPolicy: "Cancel at least 12 hours ahead at no charge; later cancellations cost AUD 25.00.",
				PrivacyNotice:      demoPrivacy, ConfirmationWindowMinutes: 12 * 60},
			OpeningHours: weekly(allWk, [2]int{hm(9, 0), hm(21, 0)}),
			Services: []store.Service{
				{Reference: "svc-remedial-60", Name: "Remedial massage (60 min)", DurationMinutes: 60, PriceCents: 11000, Currency: "AUD", BufferAfterMinutes: 15},
				{Reference: "svc-relaxation-90", Name: "Relaxation massage (90 min)", DurationMinutes: 90, PriceCents: 15000, Currency: "AUD", BufferAfterMinutes: 15},
				// The demo's service that requires the business's confirmation
				// (docs/reference.md "Bookings the business answers"): the
				// therapist checks the health notes first.
				{Reference: "svc-pregnancy-massage", Name: "Pregnancy massage (60 min)", Description: "Side-lying massage for the second and third trimester; the clinic confirms each request after reading your notes.",
					DurationMinutes: 60, PriceCents: 12000, Currency: "AUD", BufferAfterMinutes: 15, RequiresConfirmation: true},
			},
			Staff: []store.Staff{
				{Reference: "stf-chloe-nguyen", Name: "Chloe Nguyen", ServiceIDs: []string{"svc-remedial-60", "svc-relaxation-90", "svc-pregnancy-massage"}},
				{Reference: "stf-jack-morrison", Name: "Jack Morrison", ServiceIDs: []string{"svc-remedial-60"}},
			},
			StaffHours: map[string][]store.HoursWindow{
				"stf-chloe-nguyen":  weekly(allWk, [2]int{hm(9, 0), hm(15, 0)}),
				"stf-jack-morrison": weekly(monSat, [2]int{hm(13, 0), hm(21, 0)}),
			},
		},
		{
			Business: store.Business{Reference: "biz-shibuya-hair-lab", Name: "Shibuya Hair Lab",
				Description: "Cuts, colour and head spa a short walk from Shibuya Station.",
				Category:    store.CategoryAppointment, City: "Tokyo", Address: "1-14-3 Jinnan, Shibuya-ku, Tokyo 150-0041, Japan",
				TimeZone: "Asia/Tokyo", AgentBooking: true, MinNoticeMinutes: 180, HorizonDays: 30, SlotIntervalMinutes: 30,
				Currency: "JPY", CancellationPolicy: "Cancellation is free; please cancel as early as possible so others can book.",
				PrivacyNotice: demoPrivacy},
			OpeningHours: weekly([]time.Weekday{time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday, time.Monday}, [2]int{hm(10, 0), hm(20, 0)}),
			Services: []store.Service{
				// JPY has no minor unit; amounts are still in hundredths.
				{Reference: "svc-cut", Name: "Cut", DurationMinutes: 60, PriceCents: 660000, Currency: "JPY"},
				{Reference: "svc-cut-colour", Name: "Cut and colour", DurationMinutes: 120, PriceCents: 1320000, Currency: "JPY", BufferAfterMinutes: 15},
				{Reference: "svc-head-spa", Name: "Head spa", DurationMinutes: 45, PriceCents: 550000, Currency: "JPY"},
			},
			Staff: []store.Staff{
				{Reference: "stf-yui-tanaka", Name: "Yui Tanaka", ServiceIDs: []string{"svc-cut", "svc-cut-colour"}},
				{Reference: "stf-kenji-mori", Name: "Kenji Mori", ServiceIDs: []string{"svc-cut", "svc-head-spa"}},
			},
			StaffHours: map[string][]store.HoursWindow{
				"stf-yui-tanaka": weekly([]time.Weekday{time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday}, [2]int{hm(10, 0), hm(19, 0)}),
				"stf-kenji-mori": weekly([]time.Weekday{time.Thursday, time.Friday, time.Saturday, time.Sunday, time.Monday}, [2]int{hm(11, 0), hm(20, 0)}),
			},
		},
		{
			Business: store.Business{Reference: "biz-trattoria-lucia", Name: "Trattoria Lucia",
				Description: "Neighbourhood Italian restaurant; reservations by phone or on our website.",
				Category:    store.CategoryRestaurant, City: "New York", Address: "77 Carmine Street, New York, NY 10014, USA",
				TimeZone: "America/New_York", AgentBooking: true, Currency: "USD",
				CancellationPolicy: "Please let us know if your plans change.", BookingURL: "https://trattorialucia.example/reservations"},
			OpeningHours: weekly(tueSat, [2]int{hm(17, 0), hm(23, 0)}),
		},
		{
			Business: store.Business{Reference: "biz-glow-nail-atelier", Name: "Glow Nail Atelier",
				Description: "Manicures, pedicures and gel nails in Shoreditch.",
				Category:    store.CategoryAppointment, City: "London", Address: "9 Redchurch Street, London E2 7DJ, United Kingdom",
				TimeZone: "Europe/London", AgentBooking: false, MinNoticeMinutes: 60, HorizonDays: 30, SlotIntervalMinutes: 15,
				Currency: "GBP", CancellationPolicy: "Free cancellation up to 6 hours before.", CancellationWindowMinutes: 360,
				BookingURL: "https://glownails.example/book"},
			OpeningHours: weekly(monSat, [2]int{hm(10, 0), hm(19, 0)}),
			Services: []store.Service{
				{Reference: "svc-gel-manicure", Name: "Gel manicure", DurationMinutes: 45, PriceCents: 3500, Currency: "GBP"},
			},
			Staff: []store.Staff{
				{Reference: "stf-amara-okafor", Name: "Amara Okafor", ServiceIDs: []string{"svc-gel-manicure"}},
			},
			StaffHours: map[string][]store.HoursWindow{"stf-amara-okafor": weekly(monSat, [2]int{hm(10, 0), hm(19, 0)})},
		},
		{
			Business: store.Business{Reference: "biz-hudson-dental", Name: "Hudson Family Dental",
				Description: "Check-ups, hygiene and whitening for the whole family.",
				Category:    store.CategoryAppointment, City: "New York", Address: "350 Hudson Street, New York, NY 10014, USA",
				TimeZone: "America/New_York", AgentBooking: true, MinNoticeMinutes: 24 * 60, HorizonDays: 90, SlotIntervalMinutes: 20,
				CancellationWindowMinutes: 48 * 60, CancellationFeeCents: 5000, Currency: "USD",
				CancellationPolicy: "Cancel or move your appointment at least 48 hours ahead; later changes are charged USD 50.00.",
				PrivacyNotice:      "Your details and notes are shared with the practice and kept with your dental record.",
				BookingURL:         "https://hudsondental.example/appointments", ContactEmail: "appointments@hudsondental.example"},
			OpeningHours: weekly(monFri, [2]int{hm(8, 0), hm(18, 0)}),
			Services: []store.Service{
				{Reference: "svc-checkup-cleaning", Name: "Check-up and cleaning", DurationMinutes: 60, PriceCents: 18000, Currency: "USD", BufferAfterMinutes: 20},
				{Reference: "svc-whitening", Name: "In-office whitening", Description: "A deposit is taken to reserve the session.", DurationMinutes: 80, PriceCents: 45000, Currency: "USD", BufferAfterMinutes: 20, DepositRequired: true},
			},
			Staff: []store.Staff{
				{Reference: "stf-dr-elena-park", Name: "Dr. Elena Park", ServiceIDs: []string{"svc-checkup-cleaning", "svc-whitening"}},
				{Reference: "stf-sam-whitfield", Name: "Sam Whitfield (hygienist)", ServiceIDs: []string{"svc-checkup-cleaning"}},
			},
			StaffHours: map[string][]store.HoursWindow{
				"stf-dr-elena-park": weekly(monFri, [2]int{hm(8, 0), hm(12, 0)}, [2]int{hm(13, 0), hm(17, 0)}),
				"stf-sam-whitfield": weekly(monFri, [2]int{hm(9, 0), hm(18, 0)}),
			},
		},
	}
}
