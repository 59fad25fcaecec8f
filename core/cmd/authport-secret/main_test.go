package main

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

func TestSecret(t *testing.T) {
	seen := map[string]bool{}
	for range 3 {
		var out bytes.Buffer
		if err := run(nil, &out, &out); err != nil {
			t.Fatal(err)
		}
		s := strings.TrimSuffix(out.String(), "\n")
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b) != 32 {
			t.Fatalf("secret %q: %d bytes, %v; want 32 base64-encoded bytes", s, len(b), err)
		}
		if seen[s] || strings.Contains(s, ",") {
			t.Fatalf("secret %q repeated or holds a comma", s)
		}
		seen[s] = true
	}
	var out bytes.Buffer
	if err := run([]string{"-env"}, &out, &out); err != nil || !strings.HasPrefix(out.String(), `AUTH_SECRET="`) {
		t.Fatalf("-env: %q, %v", out.String(), err)
	}
	if err := run([]string{"extra"}, &out, &out); err == nil {
		t.Fatal("an extra argument was accepted")
	}
}
