package testkit

// FindString returns the first string stored under key anywhere in v (a
// decoded JSON value: maps and slices are searched depth first), or "" when
// there is none. Map order is Go's, so a key present at several depths of
// one map may be found at any of them; the direct child is always preferred.
func FindString(v any, key string) string {
	switch x := v.(type) {
	case map[string]any:
		if s, ok := x[key].(string); ok {
			return s
		}
		for _, e := range x {
			if s := FindString(e, key); s != "" {
				return s
			}
		}
	case []any:
		for _, e := range x {
			if s := FindString(e, key); s != "" {
				return s
			}
		}
	}
	return ""
}

// ConfirmedArgs returns a copy of args plus the confirmation protocol's
// fields: confirmed_summary (summary), confirmation_summary_presented and
// confirmation_obtained (true), user_confirmation_text (text) and
// idempotency_key (key). args itself is not modified.
func ConfirmedArgs(args map[string]any, summary, key, text string) map[string]any {
	out := make(map[string]any, len(args)+5)
	for k, v := range args {
		out[k] = v
	}
	out["confirmed_summary"] = summary
	out["confirmation_summary_presented"] = true
	out["confirmation_obtained"] = true
	out["user_confirmation_text"] = text
	out["idempotency_key"] = key
	return out
}
