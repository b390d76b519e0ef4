package store

import "errors"

// ErrInvalidText: a text value the database cannot represent, such as
// U+0000 in PostgreSQL text (SQLSTATE 22021 character_not_in_repertoire,
// 22P05 untranslatable_character). It is the caller's input at fault, not
// the database: do not retry. The servers refuse control characters before
// they reach the store (internal/textcheck); this sentinel is the backstop.
var ErrInvalidText = errors.New("store: text contains a character the database cannot store")
