package mongoadapter_test

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/authport/authport/conformance/provision"

	"github.com/authport/authport/conformance"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
)

// TestConformance runs the shared suite against the server of
// provision.MongoDB, each test in a database of its own, with the paths New
// picks for that server ($lookup and transactions on a real MongoDB replica
// set; two finds and ordered deletes on the FerretDB stand-in).
var _ conformance.UserDataWriter = rawView{}
var _ conformance.FactorRaw = rawView{}

func TestConformance(t *testing.T) {
	s := newServer(t, nil)
	conformance.Run(t, conformance.Harness{Name: "mongodb", New: func(t testing.TB) conformance.Fixture {
		a, db := newAdapter(t, s)
		return conformance.Fixture{Adapter: a, Raw: rawView{db: db, names: a.Collections()}, Peer: peerOn(db)}
	}})
}

// TestConformanceFallbacks runs the suite again with the fallback paths
// (two finds, ordered deletes) forced, on a server where New would pick the
// one-round-trip paths; on a server without them it is the run above, and
// is skipped.
func TestConformanceFallbacks(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	s := newServer(t, nil)
	probe, _ := newAdapter(t, s)
	if c := probe.Capabilities(); !c.Lookup && !c.Transactions {
		t.Skip("the server has neither $lookup nor transactions: TestConformance ran the fallback paths")
	}
	conformance.Run(t, conformance.Harness{Name: "mongodb", New: func(t testing.TB) conformance.Fixture {
		a, db := newAdapter(t, s, mongoadapter.WithoutLookup(), mongoadapter.WithoutTransactions())
		return conformance.Fixture{Adapter: a, Raw: rawView{db: db, names: a.Collections()},
			Peer: peerOn(db, mongoadapter.WithoutLookup(), mongoadapter.WithoutTransactions())}
	}})
}

// peerOn returns a Fixture.Peer: a second adapter on the same database,
// with a client of its own, as a second process of the application has.
func peerOn(db *mongo.Database, opts ...mongoadapter.Option) func(t testing.TB) any {
	return func(t testing.TB) any {
		t.Helper()
		c, err := mongo.Connect(options.Client().ApplyURI(provision.MongoDB(t)).SetTimeout(30 * time.Second))
		if err != nil {
			t.Fatalf("connecting the second client: %v", err)
		}
		t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
		b, err := mongoadapter.New(context.Background(), c.Database(db.Name()), opts...)
		if err != nil {
			t.Fatalf("second New on the same database: %v", err)
		}
		return b
	}
}
