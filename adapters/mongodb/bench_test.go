package mongoadapter_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	mongoadapter "github.com/authport/authport/adapters/mongodb"
)

// benchSetup returns an adapter on a fresh database holding one user and
// one session of that user.
func benchSetup(b *testing.B) (*mongoadapter.Adapter, *mongo.Database, core.User, core.Session) {
	b.Helper()
	a, db := newAdapter(b, newServer(b, nil))
	ctx := context.Background()
	u := core.User{ID: "bench-user", Email: "bench@example.com", Name: new("Bench"), Image: new("https://example.com/b.png")}
	if _, err := a.CreateUser(ctx, u); err != nil {
		b.Fatal(err)
	}
	s := core.Session{SessionToken: "bench-session", UserID: u.ID, Expires: time.Now().Add(24 * time.Hour)}
	if _, err := a.CreateSession(ctx, s); err != nil {
		b.Fatal(err)
	}
	return a, db, u, s
}

// BenchmarkGetSessionAndUser compares the adapter with the raw driver doing
// the same work (the same finds, or the same $lookup aggregation, through
// the same *mongo.Database, decoded into plain structs), in parallel. The
// README reports the ratio of the two.
func BenchmarkGetSessionAndUser(b *testing.B) {
	a, db, _, s := benchSetup(b)
	ctx := context.Background()
	get := rawFinds
	if a.Capabilities().Lookup {
		get = rawLookup
	}
	calls := [2]func() error{
		func() error {
			su, err := a.GetSessionAndUser(ctx, s.SessionToken)
			if err == nil && su == nil {
				err = errors.New("GetSessionAndUser found nothing")
			}
			return err
		},
		func() error { return get(ctx, db, s.SessionToken) },
	}
	for i, name := range []string{"adapter", "driver"} {
		b.Run(name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := calls[i](); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
	// interleaved alternates the two in every goroutine and times each
	// call, so that both see the same load on a shared machine; it reports
	// the adapter's throughput relative to the driver's.
	b.Run("interleaved", func(b *testing.B) {
		var ns, n [2]atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				start := time.Now()
				err := calls[i%2]()
				ns[i%2].Add(int64(time.Since(start)))
				n[i%2].Add(1)
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
		if n[0].Load() > 0 && n[1].Load() > 0 {
			ad := float64(ns[0].Load()) / float64(n[0].Load())
			dr := float64(ns[1].Load()) / float64(n[1].Load())
			b.ReportMetric(ad, "adapter-ns/call")
			b.ReportMetric(dr, "driver-ns/call")
			b.ReportMetric(dr/ad, "adapter/driver")
		}
	})
}

type rawSession struct {
	SessionToken string    `bson:"sessionToken"`
	UserID       string    `bson:"userId"`
	Expires      time.Time `bson:"expires"`
}

type rawUser struct {
	ID            string     `bson:"_id"`
	Email         string     `bson:"email"`
	EmailVerified *time.Time `bson:"emailVerified"`
	Name          *string    `bson:"name"`
	Image         *string    `bson:"image"`
}

// rawFinds is getSessionAndUser as two finds with the driver alone.
func rawFinds(ctx context.Context, db *mongo.Database, token string) error {
	var s rawSession
	filter := bson.D{{Key: "sessionToken", Value: token}, {Key: "expires", Value: bson.D{{Key: "$gt", Value: time.Now()}}}}
	if err := db.Collection("sessions").FindOne(ctx, filter).Decode(&s); err != nil {
		return err
	}
	var u rawUser
	return db.Collection("users").FindOne(ctx, bson.D{{Key: "_id", Value: s.UserID}}).Decode(&u)
}

// rawLookup is getSessionAndUser as one $lookup aggregation with the driver
// alone.
func rawLookup(ctx context.Context, db *mongo.Database, token string) error {
	cur, err := db.Collection("sessions").Aggregate(ctx, mongo.Pipeline{
		{{Key: "$match", Value: bson.D{{Key: "sessionToken", Value: token}, {Key: "expires", Value: bson.D{{Key: "$gt", Value: time.Now()}}}}}},
		{{Key: "$limit", Value: 1}},
		{{Key: "$lookup", Value: bson.D{{Key: "from", Value: "users"}, {Key: "localField", Value: "userId"},
			{Key: "foreignField", Value: "_id"}, {Key: "as", Value: "user"}}}},
	})
	if err != nil {
		return err
	}
	var docs []struct {
		SessionToken string    `bson:"sessionToken"`
		UserID       string    `bson:"userId"`
		Expires      time.Time `bson:"expires"`
		User         []rawUser `bson:"user"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return err
	}
	if len(docs) != 1 || len(docs[0].User) != 1 {
		return errors.New("session or user not found")
	}
	return nil
}

// BenchmarkSessionWrites creates sessions and extends one.
func BenchmarkSessionWrites(b *testing.B) {
	a, _, u, s := benchSetup(b)
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	writes := map[string]func(i int) error{
		"createSession": func(i int) error {
			_, err := a.CreateSession(ctx, core.Session{SessionToken: "s-" + strconv.Itoa(i), UserID: u.ID, Expires: exp})
			return err
		},
		"updateSession": func(i int) error {
			got, err := a.UpdateSession(ctx, core.SessionUpdate{SessionToken: s.SessionToken, Expires: core.Set(exp.Add(time.Duration(i) * time.Millisecond))})
			if err == nil && got == nil {
				err = errors.New("session not found")
			}
			return err
		},
	}
	for name, write := range writes {
		b.Run(name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				i++
				if err := write(i); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCreateAndUseVerificationToken(b *testing.B) {
	a, _, _, _ := benchSetup(b)
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	i := 0
	for b.Loop() {
		i++
		v := core.VerificationToken{Identifier: "bench@example.com", Token: "t-" + strconv.Itoa(i), Expires: exp}
		if _, err := a.CreateVerificationToken(ctx, v); err != nil {
			b.Fatal(err)
		}
		got, err := a.UseVerificationToken(ctx, v.Key())
		if err != nil || got == nil {
			b.Fatal(got, err)
		}
	}
}
