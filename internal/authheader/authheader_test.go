package authheader

import (
	"errors"
	"net/http"
	"testing"
)

func TestBearer(t *testing.T) {
	const tok = "eyJhbGciOi.J9-_~+/x=="
	for _, c := range []struct {
		name string
		hdr  []string
		want string
		err  error
	}{
		{"valid", []string{"Bearer " + tok}, tok, nil},
		{"lowercase scheme", []string{"bearer " + tok}, tok, nil},
		{"upper scheme", []string{"BEARER " + tok}, tok, nil},
		{"missing", nil, "", ErrMissing},
		{"two headers, valid first", []string{"Bearer " + tok, "Bearer junk"}, "", ErrMultiple},
		{"two headers, junk first", []string{"Bearer junk", "Bearer " + tok}, "", ErrMultiple},
		{"empty value", []string{""}, "", ErrMalformed},
		{"scheme only", []string{"Bearer"}, "", ErrMalformed},
		{"empty token", []string{"Bearer "}, "", ErrMalformed},
		{"two spaces", []string{"Bearer  " + tok}, "", ErrMalformed},
		{"tab", []string{"Bearer\t" + tok}, "", ErrMalformed},
		{"trailing garbage", []string{"Bearer " + tok + " extra"}, "", ErrMalformed},
		{"two schemes", []string{"Bearer " + tok + ", Basic eA=="}, "", ErrMalformed},
		{"quoted", []string{`Bearer "` + tok + `"`}, "", ErrMalformed},
		{"Basic", []string{"Basic eDp5"}, "", ErrMalformed},
		{"CR", []string{"Bearer " + tok + "\rX: 1"}, "", ErrMalformed},
		{"LF", []string{"Bearer " + tok + "\nX: 1"}, "", ErrMalformed},
		{"NUL", []string{"Bearer \x00" + tok}, "", ErrMalformed},
		{"padding inside", []string{"Bearer ab=cd"}, "", ErrMalformed},
		{"only padding", []string{"Bearer =="}, "", ErrMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range c.hdr {
				h.Add("Authorization", v)
			}
			got, err := Bearer(h)
			if !errors.Is(err, c.err) || got != c.want {
				t.Errorf("Bearer(%q) = %q, %v; want %q, %v", c.hdr, got, err, c.want, c.err)
			}
		})
	}
}
