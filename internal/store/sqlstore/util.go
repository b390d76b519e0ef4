package sqlstore

import (
	"time"

	"gorm.io/gorm/clause"
)

func weekday(d int) time.Weekday { return time.Weekday(d) }

func orderBy(e clause.Expression) clause.OrderBy {
	return clause.OrderBy{Expression: e}
}
