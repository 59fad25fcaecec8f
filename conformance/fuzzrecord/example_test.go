package fuzzrecord_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/authport/authport/conformance/fuzzrecord"
	"github.com/authport/authport/core"
)

// A Source turns bytes into records: here a user with id "u", e-mail "e",
// no emailVerified, name "Ada" and no image.
func ExampleSource_User() {
	src := fuzzrecord.New([]byte("\x01u\x01e\x00\x01\x03Ada\x00"))
	u := src.User()
	fmt.Printf("%q %q %v %q %v\n", u.ID, u.Email, u.EmailVerified, *u.Name, u.Image)
	// Output: "u" "e" <nil> "Ada" <nil>
}

// An adapter's fuzz target: records from the fuzzer's bytes go through the
// adapter and must come back as written, or be refused as invalid input.
func ExampleRoundTrip() {
	fuzz := func(f *testing.F, store core.Adapter) {
		for _, b := range fuzzrecord.Seeds() {
			f.Add(b)
		}
		f.Fuzz(func(t *testing.T, b []byte) {
			fuzzrecord.RoundTrip(context.Background(), t, store, b)
		})
	}
	_ = fuzz // called from func FuzzAdapterRoundTrip(f *testing.F)
}
