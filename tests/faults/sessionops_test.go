package faults

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/tokens"
)

// The failover runs' two more operations (load.iss): revoking sessions,
// and rotating refresh tokens, each with what the failover must never
// undo once the call was acknowledged: a revoked session readable again,
// a rotated refresh token accepted again.

const (
	// refreshClient is the client_id of the load's token families.
	refreshClient = "faults-cli"
	// tokensSecret seals the load's refresh tokens.
	tokensSecret = "faults-tokens-secret-0123456789abcdef"
)

// newIssuer returns a token issuer on a, for the failover runs' load: one
// client, a fresh Ed25519 key, nothing logged. a must offer
// deleteSessionsByUserId too, which the same load calls.
func newIssuer(t *testing.T, a core.Adapter) *tokens.Issuer {
	t.Helper()
	if _, ok := a.(core.SessionsByUserDeleter); !ok {
		t.Fatalf("%T has no deleteSessionsByUserId, which the failover runs' load calls", a)
	}
	key, err := tokens.GenerateKey(tokens.EdDSA, "faults")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := tokens.NewKeySet(key)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	au, err := auth.New(auth.Config{Adapter: a, Secrets: []string{tokensSecret}, BaseURL: "https://faults.test/auth", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	iss, err := tokens.New(tokens.Config{Auth: au, Keys: keys, Audience: []string{"https://api.faults.test"}, Logger: quiet,
		Clients: []tokens.Client{{ID: refreshClient, Name: "Faults CLI", RedirectURIs: []string{"http://127.0.0.1/callback"}}}})
	if err != nil {
		t.Fatal(err)
	}
	return iss
}

// newSessionToken returns a fresh session token of user u.
func (u *userRec) newSessionToken() string { return "st-" + u.id + "-" + randomHex(8) }

// revoke gives user u a second session, then ends, with
// deleteSessionsByUserId, every session of u but its first ("sign out my
// other devices") or, with all, every one ("sign out everywhere"). The
// sessions an acknowledged call ended must never be readable again.
func (l *load) revoke(u *userRec, all bool) {
	other := u.newSessionToken()
	if l.createSession(u.id, other, core.NormalizeTime(time.Now().Add(time.Hour))) != nil {
		return
	}
	rev := revocation{ended: []string{other}}
	except := u.session
	if all {
		except = ""
		rev.ended = append(rev.ended, u.session)
		// Gone, or maybe gone when the call fails: from now on not a
		// session the user must hold.
		u.sessAck = false
	}
	rev.call.start = time.Now()
	err := l.call("deleteSessionsByUserId", func(ctx context.Context) error {
		_, err := l.a.(core.SessionsByUserDeleter).DeleteSessionsByUserID(ctx, u.id, except)
		return err
	})
	rev.call.end = time.Now()
	if err == nil {
		u.revocations = append(u.revocations, rev)
	}
}

// refresh rotates the refresh token of a live user's token family
// (Issuer.Refresh: getSessionAndUser, then extendSession from E_n to
// E_n+1), or, one time in four and when there is none to rotate, starts a
// family for a live user without one (Issuer.Issue: createSession).
func (l *load) refresh(rng *mrand.Rand, live []*userRec) {
	u := pick(rng, live, func(u *userRec) bool { return u.family != nil && !u.family.unsure })
	if u == nil || rng.IntN(4) == 0 {
		if u = pick(rng, live, func(u *userRec) bool { return u.family == nil }); u != nil {
			l.startFamily(u)
		}
		return
	}
	l.rotate(u)
}

func (l *load) startFamily(u *userRec) {
	var res *tokens.TokenResponse
	err := l.call("issue", func(ctx context.Context) error {
		var err error
		res, err = l.iss.Issue(ctx, u.id, refreshClient, tokens.IssueOptions{})
		return err
	})
	if err == nil {
		u.family = &familyRec{refresh: []string{res.RefreshToken}}
	}
}

// rotate refreshes the last refresh token of u's family. A refusal of it
// (its rotation or its family's session undone) is a loss the load sees.
func (l *load) rotate(u *userRec) {
	f := u.family
	var res *tokens.TokenResponse
	c := span{start: time.Now()}
	err := l.call("refresh", func(ctx context.Context) error {
		var err error
		res, err = l.iss.Refresh(ctx, f.refresh[len(f.refresh)-1], refreshClient)
		return err
	})
	c.end = time.Now()
	var refused *tokens.Error
	switch {
	case err == nil:
		f.refresh = append(f.refresh, res.RefreshToken)
		f.rotations = append(f.rotations, c)
	case errors.As(err, &refused):
		f.unsure = true
		l.t.note(&l.t.lost, "refresh of the last refresh token of user %s's family (generation %d, acknowledged) refused: %v",
			u.id, len(f.refresh)-1, err)
	default:
		f.unsure = true
	}
}

// checkSessionOps counts, for a user whose deletion was not acknowledged
// (deletedBack covers those), the sessions its acknowledged revocations
// ended that are readable again (their record is there: rv.session), and
// the rotated refresh tokens of its family that iss would accept again.
// Issuer.Introspect says so without side effects: a refresh token is
// active exactly when Refresh would rotate it (its family's stored expiry
// is still, or again, its E_n), where presenting it would end the family.
// The last token of a family no failed refresh touched must still be
// accepted, unless the user's deletion was tried.
func checkSessionOps(ctx context.Context, rv raw, iss *tokens.Issuer, u *userRec, c *checked) error {
	for _, rev := range u.revocations {
		for _, tok := range rev.ended {
			c.acked++
			c.revoked++
			uid, _, found, err := rv.session(ctx, tok)
			if err != nil {
				return err
			}
			if found {
				c.revokedBack++
				c.lost = append(c.lost, fmt.Sprintf("a session of user %s ended by an acknowledged deleteSessionsByUserId (the call %v) is readable again (userId %q)",
					u.id, rev.call, uid))
			}
		}
	}
	f := u.family
	if f == nil {
		return nil
	}
	accepted := func(token string) (bool, error) {
		in, err := iss.Introspect(ctx, token)
		return in.Active, err
	}
	last := len(f.refresh) - 1
	for n, tok := range f.refresh[:last] {
		c.acked++
		c.rotated++
		ok, err := accepted(tok)
		if err != nil {
			return err
		}
		if ok {
			c.rotationsBack++
			c.lost = append(c.lost, fmt.Sprintf("refresh token generation %d of user %s's family, rotated (acknowledged, the call %v), is accepted again",
				n, u.id, f.rotations[n]))
		}
	}
	if f.unsure || u.delTried {
		return nil
	}
	c.acked++
	ok, err := accepted(f.refresh[last])
	if err != nil {
		return err
	}
	if !ok {
		c.lost = append(c.lost, fmt.Sprintf("the last refresh token (generation %d) of user %s's family is not accepted: its acknowledged session or rotation is gone",
			last, u.id))
	}
	return nil
}

// sessionOpsCells is a failover table's two cells of the session
// operations: revoked sessions readable again, and rotated refresh tokens
// accepted again, each with how many the check looked at.
func (r row) sessionOpsCells() string {
	return fmt.Sprintf("%d of %d | %d of %d", r.revokedBack, r.revoked, r.rotationsBack, r.rotated)
}
