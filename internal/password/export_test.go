package password

// HashWith exposes hashing with given parameters to the tests.
func HashWith(pw string, p Params) (string, error) { return newHash(pw, p) }
