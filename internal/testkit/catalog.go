package testkit

import (
	"fmt"
	"strings"
)

// CatalogFile is a valid JSON catalog file of n businesses, each with two
// services, two staff members and their hours (about 1 KB a business), as
// the stress tests and benchmarks of a large import send it. Business
// references are biz-00000, biz-00001 and so on.
func CatalogFile(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"businesses":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `
{"reference":"biz-%05d","name":"Business %d","description":"A business of the import tests.","category":"appointment",
 "city":"Porto","timezone":"Europe/Lisbon","currency":"EUR","agent_booking":true,
 "hours":{"monday":["09:00-13:00","14:00-19:00"],"tuesday":["09:00-13:00","14:00-19:00"],"saturday":["09:00-14:00"]},
 "services":[{"reference":"cut","name":"Haircut","duration_minutes":30,"price_cents":2200},
             {"reference":"shave","name":"Hot-towel shave","duration_minutes":45,"price_cents":3000}],
 "staff":[{"reference":"joana","name":"Joana","services":["cut","shave"],"hours":{"monday":["09:00-13:00","14:00-19:00"],"tuesday":["09:00-13:00"]}},
          {"reference":"miguel","name":"Miguel","services":["cut"],"hours":{"tuesday":["14:00-19:00"],"saturday":["09:00-14:00"]}}]}`, i, i)
	}
	b.WriteString("]}\n")
	return []byte(b.String())
}
