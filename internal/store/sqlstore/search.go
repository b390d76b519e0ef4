package sqlstore

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/linkslot/linkslot/internal/store"
)

// Business search (docs/design.md, "Business search"). Every searchable
// business — agent booking on, an appointment business — has one row in
// business_terms for each distinct prefix (maxTermRunes characters at
// most) of each folded word of its name, city and service names. A query
// word is one equality on business_terms_term (term, field, name_key,
// business_id), which hands the businesses over already in rank order, so
// the page is read and not every match; names that begin with the whole
// query come first, from businesses_search_name. The same tables and
// statements serve PostgreSQL and SQLite.

// maxTermRunes is the longest prefix stored; a longer query word is looked
// up by its first maxTermRunes characters and checked against the whole
// folded text.
const maxTermRunes = 12

// Where a term occurs; the smaller ranks first.
const (
	fieldName  = 0 // a word of the name
	fieldOther = 1 // a word of the city or of a service name
)

// fold is what search compares: lower case, accents removed (NFKD, then
// every combining mark dropped: "Café" is "cafe"), and every run of
// characters that are neither letters nor digits one space, trimmed.
func fold(s string) string {
	var b strings.Builder
	gap := false
	for _, r := range norm.NFKD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if gap && b.Len() > 0 {
				b.WriteByte(' ')
			}
			gap = false
			b.WriteRune(unicode.ToLower(r))
		default:
			gap = true
		}
	}
	return b.String()
}

// prefix is w cut to n characters.
func prefix(w string, n int) string {
	i := 0
	for j := range w {
		if i == n {
			return w[:j]
		}
		i++
	}
	return w
}

// searchDoc is what a business is found by.
type searchDoc struct {
	name, city, key string // folded; key is every word, name first
	searchable      bool
}

func searchDocOf(c store.Catalog) searchDoc {
	parts := []string{fold(c.Business.Name), fold(c.Business.City)}
	for _, sv := range c.Services {
		parts = append(parts, fold(sv.Name))
	}
	return searchDoc{name: parts[0], city: parts[1], key: strings.Join(strings.Fields(strings.Join(parts, " ")), " "),
		searchable: c.Business.AgentBooking && c.Business.Category == store.CategoryAppointment}
}

func (d searchDoc) apply(r *businessRow) {
	r.SearchKey, r.SearchName, r.SearchCity = d.key, nil, nil
	if d.searchable {
		r.SearchName, r.SearchCity = ptr(d.name), ptr(d.city)
	}
}

// same reports whether r already holds d.
func (d searchDoc) same(r businessRow) bool {
	return r.SearchKey == d.key && (r.SearchName != nil) == d.searchable &&
		(!d.searchable || *r.SearchName == d.name && *r.SearchCity == d.city)
}

type businessTermRow struct {
	BusinessID string `gorm:"primaryKey"`
	Term       string `gorm:"primaryKey"`
	Field      int
	CityKey    string
	NameKey    string
}

func (businessTermRow) TableName() string { return "business_terms" }

type searchWordRow struct {
	Word string `gorm:"primaryKey"`
}

func (searchWordRow) TableName() string { return "search_words" }

// terms are d's rows of business_terms, in term order.
func (d searchDoc) terms(businessID string) []businessTermRow {
	field := map[string]int{}
	add := func(text string, f int) {
		for _, w := range strings.Fields(text) {
			for n := 1; n <= maxTermRunes; n++ {
				t := prefix(w, n)
				if old, ok := field[t]; !ok || f < old {
					field[t] = f
				}
				if len(t) == len(w) {
					break
				}
			}
		}
	}
	add(d.name, fieldName)
	add(d.key, fieldOther)
	out := make([]businessTermRow, 0, len(field))
	for t, f := range field {
		out = append(out, businessTermRow{BusinessID: businessID, Term: t, Field: f, CityKey: d.city, NameKey: d.name})
	}
	slices.SortFunc(out, func(a, b businessTermRow) int { return strings.Compare(a.Term, b.Term) })
	return out
}

// words are d's distinct words of three characters or more, sorted (so
// that concurrent imports add shared words in the same order).
func (d searchDoc) words() []searchWordRow {
	ws := strings.Fields(d.key)
	slices.Sort(ws)
	ws = slices.Compact(ws)
	out := make([]searchWordRow, 0, len(ws))
	for _, w := range ws {
		if utf8.RuneCountInString(w) >= 3 {
			out = append(out, searchWordRow{Word: w})
		}
	}
	return out
}

// index rewrites the business's rows of business_terms and adds its words
// to the vocabulary of suggestions (never removed: a suggestion is only
// offered when it finds something).
func (s *Store) index(tx *gorm.DB, businessID string, d searchDoc) error {
	if err := tx.Delete(&businessTermRow{}, "business_id = ?", businessID).Error; err != nil {
		return err
	}
	if !d.searchable {
		return nil
	}
	if ts := d.terms(businessID); len(ts) > 0 {
		if err := tx.CreateInBatches(ts, 200).Error; err != nil {
			return err
		}
	}
	if ws := d.words(); len(ws) > 0 {
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(ws, 500).Error; err != nil {
			return err
		}
	}
	return nil
}

// searchSchema remembers whether the search tables exist. The store's
// upgrade tests run today's code on an older schema (docs/performance.md
// keeps their figures); there a catalog is written without its search
// rows, and Migrate indexes it when it applies searchMigration.
type searchSchema struct{ state atomic.Int32 } // 0 unknown, 1 present, 2 absent

func (c *searchSchema) forget() {
	if c != nil {
		c.state.Store(0)
	}
}

// hasSearch reports whether the schema has business_terms.
func (s *Store) hasSearch(tx *gorm.DB) bool {
	if s.search == nil {
		return true
	}
	switch s.search.state.Load() {
	case 1:
		return true
	case 2:
		return false
	}
	var n int64
	q := "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'business_terms'"
	if s.dialect == "postgres" {
		q = "SELECT count(*) FROM pg_class WHERE relname = 'business_terms' AND relkind = 'r' AND pg_table_is_visible(oid)"
	}
	if err := tx.Raw(q).Scan(&n).Error; err != nil {
		return true // the write that follows says what is wrong
	}
	s.search.state.Store(map[bool]int32{true: 1, false: 2}[n > 0])
	return n > 0
}

// searchMigration is the migration that adds the search tables; Migrate
// indexes the businesses written before it (BackfillSearch) once it is
// applied.
const searchMigration = 24

// BackfillSearch indexes for search the businesses written without it —
// before migration 00024, or by a bulk load in SQL — those whose
// search_key is still empty, 500 to a transaction, and returns how many.
// It leaves updated_at as it was: nothing a person sees changed.
// Migrate runs it when it applies 00024.
func (s *Store) BackfillSearch(ctx context.Context) (int, error) {
	last, done := "", 0
	for {
		var rows []businessRow
		if err := s.q(ctx).Where("search_key = '' AND id > ?", last).Order("id").Limit(500).Find(&rows).Error; err != nil {
			return done, translate(err)
		}
		if len(rows) == 0 {
			return done, nil
		}
		err := s.tx(ctx, func(tx *gorm.DB) error {
			ids := make([]string, len(rows))
			for i, r := range rows {
				ids[i] = r.ID
			}
			var svcs []serviceRow
			if err := tx.Select("business_id, name").Where("business_id IN ?", ids).Order("business_id, reference").Find(&svcs).Error; err != nil {
				return err
			}
			names := map[string][]store.Service{}
			for _, sv := range svcs {
				names[sv.BusinessID] = append(names[sv.BusinessID], store.Service{Name: sv.Name})
			}
			if err := tx.Delete(&businessTermRow{}, "business_id IN ?", ids).Error; err != nil {
				return err
			}
			var terms []businessTermRow
			var words []searchWordRow
			for _, r := range rows {
				d := searchDocOf(store.Catalog{Business: toBusiness(r), Services: names[r.ID]})
				d.apply(&r)
				if err := tx.Model(&businessRow{}).Where("id = ?", r.ID).
					UpdateColumns(map[string]any{"search_key": r.SearchKey, "search_name": r.SearchName, "search_city": r.SearchCity}).Error; err != nil {
					return err
				}
				if d.searchable {
					terms = append(terms, d.terms(r.ID)...)
					words = append(words, d.words()...)
				}
			}
			if len(terms) > 0 {
				if err := tx.CreateInBatches(terms, 200).Error; err != nil {
					return err
				}
			}
			slices.SortFunc(words, func(a, b searchWordRow) int { return strings.Compare(a.Word, b.Word) })
			words = slices.Compact(words)
			if len(words) > 0 {
				return tx.Clauses(clause.OnConflict{DoNothing: true}).CreateInBatches(words, 500).Error
			}
			return nil
		})
		if err != nil {
			return done, err
		}
		done += len(rows)
		last = rows[len(rows)-1].ID
	}
}

// SearchBusinesses returns up to q.Limit+1 searchable businesses from
// q.Offset on, in the ranking of docs/design.md ("Business search"):
// names that begin with the whole folded query (an exact name first);
// then businesses where the query's longest word begins a word of the
// name; then those where it begins a word of the city or of a service
// name; within each, by folded name and id. Every word of the query must
// begin a word of the name, city or a service name; a city narrows to
// businesses of that (folded) city. Two statements at most, each reading
// about the rows it returns.
func (s *Store) SearchBusinesses(ctx context.Context, q store.BusinessQuery) ([]store.Business, error) {
	text, city := fold(q.Text), fold(q.City)
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	offset := max(q.Offset, 0)
	need := offset + limit + 1
	hi := text + "\U0010FFFF"
	var rows []businessRow
	first := s.q(ctx).Model(&businessRow{}).Where("search_name >= ? AND search_name < ?", text, hi)
	if city != "" {
		first = first.Where("search_city = ?", city)
	}
	if err := first.Order("search_name, id").Limit(need).Find(&rows).Error; err != nil {
		return nil, translate(err)
	}
	if words := strings.Fields(text); len(rows) < need && len(words) > 0 {
		more, err := s.searchTerms(ctx, words, city, text, hi, need-len(rows))
		if err != nil {
			return nil, err
		}
		rows = append(rows, more...)
	}
	if offset >= len(rows) {
		return nil, nil
	}
	rows = rows[offset:]
	out := make([]store.Business, len(rows))
	for i, r := range rows {
		out[i] = toBusiness(r)
	}
	return out, nil
}

// denseTerm is the number of businesses beyond which a query word counts
// as common: a word with fewer is read whole and sorted, a bounded cost.
const denseTerm = 200

// searchTerms is the second statement of a search: up to n businesses,
// other than those whose folded name begins with text (from lo to hi), in
// which every word begins a word of the name, city or a service name; by
// whether the first word begins a word of the name, then folded name and
// id. One word is read in that order from business_terms_term (or _city)
// and the read stops at n. With several, each word's businesses are
// counted up to denseTerm; when the rarest has fewer, the search starts
// from it and sorts what it finds (fewer than denseTerm rows); when every
// word is common, it reads the first word's in order and checks the others
// by the primary key, as for one word.
func (s *Store) searchTerms(ctx context.Context, words []string, city, lo, hi string, n int) ([]businessRow, error) {
	var terms []string
	for _, w := range words {
		if t := prefix(w, maxTermRunes); !slices.Contains(terms, t) {
			terms = append(terms, t)
		}
	}
	lead := terms[0]
	if len(terms) > 1 { // (the statements: docs/design.md, "Business search")
		least := int64(denseTerm)
		for _, t := range terms[:min(len(terms), 8)] {
			where, args := "term = ?", []any{t}
			if city != "" {
				where, args = "city_key = ? AND term = ?", []any{city, t}
			}
			var c int64
			if err := s.q(ctx).Raw("SELECT count(*) FROM (SELECT 1 FROM business_terms WHERE "+where+" LIMIT ?) AS m",
				append(args, denseTerm)...).Scan(&c).Error; err != nil {
				return nil, translate(err)
			}
			if c < least {
				least, lead = c, t
			}
		}
	}
	if lead != terms[0] {
		return s.searchRare(ctx, words, terms, lead, city, lo, hi, n)
	}
	q := s.q(ctx).Table("business_terms AS t").Select("b.*").Joins("JOIN businesses AS b ON b.id = t.business_id").Where("t.term = ?", lead)
	if city != "" {
		q = q.Where("t.city_key = ?", city)
	}
	for _, t := range terms[1:] {
		q = q.Where("EXISTS (SELECT 1 FROM business_terms AS o WHERE o.business_id = t.business_id AND o.term = ?)", t)
	}
	for _, w := range words {
		if utf8.RuneCountInString(w) > maxTermRunes {
			q = q.Where("(' ' || b.search_key) LIKE ?", "% "+w+"%")
		}
	}
	var rows []businessRow
	err := q.Where("NOT (t.name_key >= ? AND t.name_key < ?)", lo, hi).Order("t.field, t.name_key, t.business_id").Limit(n).Find(&rows).Error
	return rows, translate(err)
}

// searchRare is searchTerms started from a word other than the first,
// which begins fewer than denseTerm businesses: their ids are read from
// business_terms (a MATERIALIZED step, so that no planner starts from a
// common word), each with the first word's row for the rank and the other
// words' looked up by the primary key, and sorted; then the businesses by
// id.
func (s *Store) searchRare(ctx context.Context, words, terms []string, lead, city, lo, hi string, n int) ([]businessRow, error) {
	where, args := "term = ?", []any{lead}
	if city != "" {
		where, args = "city_key = ? AND term = ?", []any{city, lead}
	}
	sql := "WITH r AS MATERIALIZED (SELECT business_id, name_key FROM business_terms WHERE " + where + " LIMIT ?) " +
		"SELECT business_id FROM (SELECT r.business_id, r.name_key, " +
		"(SELECT f.field FROM business_terms AS f WHERE f.business_id = r.business_id AND f.term = ?) AS field FROM r) AS t " +
		"WHERE field IS NOT NULL AND NOT (name_key >= ? AND name_key < ?)"
	args = append(args, denseTerm, terms[0], lo, hi)
	for _, t := range terms[1:] {
		if t != lead {
			sql += " AND EXISTS (SELECT 1 FROM business_terms AS o WHERE o.business_id = t.business_id AND o.term = ?)"
			args = append(args, t)
		}
	}
	sql += " ORDER BY field, name_key, business_id"
	var ids []string
	if err := s.q(ctx).Raw(sql, args...).Scan(&ids).Error; err != nil {
		return nil, translate(err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var found []businessRow
	if err := s.q(ctx).Where("id IN ?", ids).Find(&found).Error; err != nil {
		return nil, translate(err)
	}
	byID := make(map[string]businessRow, len(found))
	for _, r := range found {
		byID[r.ID] = r
	}
	var rows []businessRow
	for _, id := range ids {
		r, ok := byID[id]
		if !ok || !hasWords(" "+r.SearchKey, words) {
			continue
		}
		if rows = append(rows, r); len(rows) == n {
			break
		}
	}
	return rows, nil
}

// hasWords reports whether every word longer than maxTermRunes begins a
// word of key (a space, then the folded words); shorter ones were matched
// by their terms.
func hasWords(key string, words []string) bool {
	for _, w := range words {
		if utf8.RuneCountInString(w) > maxTermRunes && !strings.Contains(key, " "+w) {
			return false
		}
	}
	return true
}

// SuggestSearches proposes, for a query that found nothing, up to three
// other queries that do find something: the query with one of its words
// (of its first four, each of three characters or more) replaced by a word
// of the catalog within a small edit distance (one edit for words of up to
// four characters, two beyond; a swap of neighbours is one edit). The
// candidates come from search_words: on PostgreSQL the 50 nearest by
// trigram distance through search_words_trgm, on SQLite those with the
// same first letter and a length within the distance.
func (s *Store) SuggestSearches(ctx context.Context, q store.BusinessQuery) ([]string, error) {
	words := strings.Fields(fold(q.Text))
	var out []string
	for i, w := range words {
		if i == 4 || len(out) == 3 {
			break
		}
		n := utf8.RuneCountInString(w)
		if n < 3 {
			continue
		}
		near, err := s.nearWords(ctx, w, n)
		if err != nil {
			return nil, err
		}
		for _, alt := range near {
			if len(out) == 3 {
				break
			}
			try := slices.Clone(words)
			try[i] = alt
			text := strings.Join(try, " ")
			if slices.Contains(out, text) {
				continue
			}
			found, err := s.SearchBusinesses(ctx, store.BusinessQuery{Text: text, City: q.City, Limit: 1})
			if err != nil {
				return nil, err
			}
			if len(found) > 0 {
				out = append(out, text)
			}
		}
	}
	return out, nil
}

// nearWords are the vocabulary's words within the edit distance of w (n
// characters), nearest first, then alphabetically.
func (s *Store) nearWords(ctx context.Context, w string, n int) ([]string, error) {
	bound := 2
	if n <= 4 {
		bound = 1
	}
	var cands []string
	db := s.q(ctx).Model(&searchWordRow{})
	if s.dialect == "postgres" {
		db = db.Order(clause.Expr{SQL: "word <-> ?", Vars: []any{w}}).Limit(50)
	} else {
		r, size := utf8.DecodeRuneInString(w)
		db = db.Where("word >= ? AND word < ? AND length(word) BETWEEN ? AND ?", w[:size], string(r+1), n-bound, n+bound).Limit(5000)
	}
	if err := db.Pluck("word", &cands).Error; err != nil {
		return nil, translate(err)
	}
	type near struct {
		word string
		d    int
	}
	var got []near
	for _, c := range cands {
		if d := editDistance(w, c, bound); d > 0 && d <= bound {
			got = append(got, near{c, d})
		}
	}
	slices.SortFunc(got, func(a, b near) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.word, b.word)
	})
	out := make([]string, 0, min(len(got), 5))
	for _, g := range got[:min(len(got), 5)] {
		out = append(out, g.word)
	}
	return out, nil
}

// editDistance is the optimal string alignment distance of a and b, in
// characters (insertions, deletions, substitutions and swaps of two
// neighbours), or bound+1 when it is more than bound.
func editDistance(a, b string, bound int) int {
	x, y := []rune(a), []rune(b)
	if d := len(x) - len(y); d > bound || -d > bound {
		return bound + 1
	}
	prev2 := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		least := cur[0]
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			least = min(least, cur[j])
		}
		if least > bound {
			return bound + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(y)], bound+1)
}
