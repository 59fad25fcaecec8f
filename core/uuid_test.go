package core_test

import (
	"regexp"
	"testing"

	"github.com/authport/authport/core"
)

// TestNewUUID: the lowercase hyphenated form with version 4 and the RFC
// 9562 variant, and no two alike.
func TestNewUUID(t *testing.T) {
	form := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := core.NewUUID()
		if !form.MatchString(id) {
			t.Fatalf("NewUUID() = %q, want a version 4 UUID", id)
		}
		if seen[id] {
			t.Fatalf("NewUUID() returned %q twice", id)
		}
		seen[id] = true
	}
}
