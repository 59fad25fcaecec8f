package mongoadapter_test

import (
	"context"
	"testing"

	"github.com/authport/authport/conformance/fuzzrecord"
	"github.com/authport/authport/core"
)

// FuzzAdapterRoundTrip writes records built from fuzzed fields through the
// adapter into a real MongoDB server and reads them back (see
// fuzzrecord.RoundTrip), then checks that deleting the user left no
// document behind. It needs AUTHPORT_MONGODB_URL and
// skips without one, unless AUTHPORT_REQUIRE names mongodb. Each fuzzing
// worker has a database of its own.
func FuzzAdapterRoundTrip(f *testing.F) {
	fuzzrecord.AddSeeds(f)
	a, db := newAdapter(f, newServer(f, nil))
	raw := rawView{db: db, names: a.Collections()}
	st := core.NewStore(a) // as the library calls it: bad strings never reach the adapter
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzrecord.RoundTrip(ctx, t, st, b)
		for _, coll := range []string{raw.names.Users, raw.names.Accounts, raw.names.Sessions, raw.names.VerificationTokens, raw.names.Authenticators, raw.names.Factors} {
			docs, err := raw.all(ctx, coll)
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) != 0 {
				t.Fatalf("left behind in %s: %v", coll, docs)
			}
		}
	})
}
