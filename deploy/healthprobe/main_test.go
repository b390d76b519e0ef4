package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestProbe(t *testing.T) {
	tests := []struct {
		name    string
		code    int
		wantErr bool
	}{
		{"ready", http.StatusOK, false},
		{"not ready", http.StatusServiceUnavailable, true},
		{"not found", http.StatusNotFound, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(tt.code) }))
			defer srv.Close()
			if err := probe(t.Context(), srv.URL+"/readyz", time.Second); (err != nil) != tt.wantErr {
				t.Fatalf("probe: %v, want error %v", err, tt.wantErr)
			}
		})
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	if err := probe(t.Context(), srv.URL, time.Second); err == nil {
		t.Fatal("probe of a closed server succeeded")
	}
}
