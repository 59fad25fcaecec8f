package fuzzrecord

import (
	"testing"
	"time"
)

// TestSeedsReachTheirShapes pins what the seeds are for, so that a change
// to the Source's reading order cannot quietly make them ordinary.
func TestSeedsReachTheirShapes(t *testing.T) {
	seeds := Seeds()
	if u := New(seeds[0]).User(); u.ID != "" || u.EmailVerified != nil || u.Name != nil {
		t.Errorf("empty input: user %#v, want the zero user", u)
	}
	if u := New(seeds[1]).User(); u.EmailVerified == nil || u.EmailVerified.Year() > -292_000_000 || u.Name == nil || *u.Name != "" {
		t.Errorf("seed 1: user %#v, want emailVerified near the least int64 milliseconds and an empty name", u)
	}
	if u := New(seeds[3]).User(); u.EmailVerified == nil || time.UnixMilli(u.EmailVerified.UnixMilli()).Equal(*u.EmailVerified) {
		t.Errorf("seed 3: user %#v, want emailVerified beyond int64 milliseconds", u)
	}
	src := New(seeds[4])
	u, a, s, au, v := src.User(), src.Account(), src.Session(), src.Authenticator(), src.VerificationToken()
	if u.ID != "user1" || u.Email != "ada@example.com" || u.Name == nil || *u.Name != "Ada" {
		t.Errorf("seed 4: user %#v", u)
	}
	if a.Provider != "github" || !a.Type.Valid() || len(a.AuthorizationDetails) != 2 || a.TokenType == nil || *a.TokenType != "Bearer" ||
		a.AuthorizationDetails[0].Locations == nil || len(a.AuthorizationDetails[0].Locations) != 0 || len(a.AuthorizationDetails[0].Actions) != 1 {
		t.Errorf("seed 4: account %#v", a)
	}
	if s.SessionToken != "tok" || s.UserID != "user1" || s.Expires.Before(time.Now()) {
		t.Errorf("seed 4: session %#v, want a live one", s)
	}
	if au.CredentialID != "cred" || au.Counter != 5 || !au.CredentialBackedUp || au.Transports == nil || *au.Transports != "usb" {
		t.Errorf("seed 4: authenticator %#v", au)
	}
	if v.Identifier != "ada@example.com" || v.Token != "hash" || v.Expires.Before(time.Now()) || src.Len() != 0 {
		t.Errorf("seed 4: token %#v, %d bytes left", v, src.Len())
	}
}

// TestSourceAfterTheEnd checks that a used-up Source gives zero values.
func TestSourceAfterTheEnd(t *testing.T) {
	s := New([]byte{5, 'a'})
	if got := s.Str(); got != "a" {
		t.Errorf("Str cut short = %q, want %q", got, "a")
	}
	if s.Len() != 0 || s.Byte() != 0 || s.Int64() != 0 || s.OptStr() != nil || s.Strs() != nil || s.OptTime() != nil {
		t.Error("a used-up Source does not give zero values")
	}
}
