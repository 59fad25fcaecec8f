package mapstore_test

import (
	"context"
	"testing"

	"github.com/authport/authport/adapters/mapstore"
	"github.com/authport/authport/conformance"
)

func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Harness{Name: "mapstore", New: func(testing.TB) conformance.Fixture {
		store := mapstore.New()
		return conformance.Fixture{
			Adapter: store,
			Raw: conformance.RawSnapshot(func(context.Context) (conformance.Records, error) {
				users, accounts, sessions := store.Dump()
				return conformance.Records{Users: users, Accounts: accounts, Sessions: sessions}, nil
			}),
			Peer: func(testing.TB) any { return store }, // the store is the value: a second instance shares it
		}
	}})
}
