package catalogfile

import (
	"fmt"

	"github.com/linkslot/linkslot/internal/store"
)

// Warnings lists what a valid catalog file allows but is almost always a
// mistake, with the same paths as the problems (docs/reference.md §15): a
// staff member with no weekly hours is never offered a slot, and neither
// is a service that no staff member performs. They do not stop an import;
// the importer shows them. cats are what Parse returned (by reference, in
// file order). Restaurants are left out: they are not booked through
// Linkslot's slots.
func Warnings(cats []store.Catalog) []Problem {
	var out []Problem
	for i, c := range cats {
		if c.Business.Category == store.CategoryRestaurant {
			continue
		}
		bp := index("businesses", i)
		performed := map[string]bool{}
		for j, st := range c.Staff {
			for _, ref := range st.ServiceIDs {
				performed[ref] = true
			}
			if len(c.StaffHours[st.Reference]) == 0 {
				out = append(out, Problem{Path: index(join(bp, "staff"), j),
					Message: fmt.Sprintf("staff member %q (%s) has no hours, so no slot is ever offered with them: give them hours, or leave them out", st.Reference, st.Name)})
			}
		}
		for k, sv := range c.Services {
			if !performed[sv.Reference] {
				out = append(out, Problem{Path: index(join(bp, "services"), k),
					Message: fmt.Sprintf("no staff member performs service %q (%s), so it is never offered: add it to a staff member's services, or leave it out", sv.Reference, sv.Name)})
			}
		}
	}
	return out
}
