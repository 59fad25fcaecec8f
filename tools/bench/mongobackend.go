package main

import (
	"context"
	"net"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
	"github.com/authport/authport/conformance/provision"
)

// mongoStore is the MongoDB adapter on a database of its own (dropped at
// close). It has no raw baseline yet: its rows show the adapter alone.
type mongoStore struct {
	c       *mongo.Client
	db      *mongo.Database
	adapter *mongoadapter.Adapter
	rt      *roundTrips
}

type mongoDialer struct{ rt *roundTrips }

func (d mongoDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return d.rt.dial(ctx, network, addr)
}

func openMongo(ctx context.Context, uri string) (*mongoStore, error) {
	s := &mongoStore{rt: &roundTrips{}}
	c, err := mongo.Connect(options.Client().ApplyURI(uri).SetDialer(mongoDialer{s.rt}).SetMaxPoolSize(32).
		SetServerSelectionTimeout(5 * time.Second))
	if err != nil {
		return nil, err
	}
	s.c = c
	s.db = c.Database(provision.NewName("authport_bench_"))
	if s.adapter, err = mongoadapter.New(ctx, s.db); err == nil {
		err = s.adapter.Migrate(ctx)
	}
	if err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *mongoStore) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = s.db.Drop(ctx)
	_ = s.c.Disconnect(ctx)
}
