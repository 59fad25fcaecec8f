package password

import (
	"context"
	"testing"
)

// BenchmarkArgon2id measures Hash and Verify at RFC9106Params (64 MiB,
// t=3, p=4: the default a deployment starts from) and at the test-sized
// parameters. ReportAllocs shows the memory each takes.
func BenchmarkArgon2id(b *testing.B) {
	for _, c := range []struct {
		name string
		p    Argon2idParams
	}{{"RFC9106", RFC9106Params()}, {"test", testParams}} {
		a := newTestHasher(b, c.p)
		ctx := context.Background()
		hash, err := a.Hash(ctx, "correct horse battery staple")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/Hash", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Hash(ctx, "correct horse battery staple"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/Verify", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if ok, _, err := a.Verify(ctx, hash, "correct horse battery staple"); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

// BenchmarkBetterAuthScrypt measures Hash and Verify of Better Auth's
// scrypt (N=16384, r=16, p=1: 32 MiB per call, fixed by Better Auth), for
// comparison with BenchmarkArgon2id.
func BenchmarkBetterAuthScrypt(b *testing.B) {
	s := newTestBA(b)
	ctx := context.Background()
	hash, err := s.Hash(ctx, "correct horse battery staple")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Hash", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Hash(ctx, "correct horse battery staple"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Verify", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ok, _, err := s.Verify(ctx, hash, "correct horse battery staple"); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
}
