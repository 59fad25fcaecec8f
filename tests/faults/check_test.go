package faults

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/authport/authport/core"
)

// raw reads what a server holds with its own driver, never through the
// adapter. Found is false, with a nil error, for a record that is not there.
type raw interface {
	user(ctx context.Context, id string) (found bool, err error)
	account(ctx context.Context, k core.AccountKey) (userID string, found bool, err error)
	session(ctx context.Context, token string) (userID string, expires time.Time, found bool, err error)
	authenticator(ctx context.Context, credID string) (userID string, found bool, err error)
	token(ctx context.Context, k core.VerificationTokenKey) (found bool, err error)
	// leftovers lists what still belongs to user u after its deletion was
	// acknowledged: accounts, sessions, authenticators (and index entries
	// where the store keeps them).
	leftovers(ctx context.Context, u *userRec) ([]leftover, error)
}

// leftover is one record left of a deleted user.
type leftover struct {
	what string
	// claim: a provisional claim of a unique key (Redis Cluster's claim,
	// write, confirm protocol) made by a write that was not acknowledged,
	// which expires by itself within the adapter's claim TTL.
	claim bool
}

// snapshotter is a raw view that can read everything at once, for a server
// (the stand-in) on which one query per record would take long.
type snapshotter interface {
	snapshot(ctx context.Context) (raw, error)
}

// checked is the verdict of the raw reads.
type checked struct {
	acked   int      // acknowledged writes and deletes checked
	lost    []string // an acknowledged write or delete not (or no longer) in effect
	partial []string // a record left by an acknowledged deleteUser
	claims  []string // provisional claims left (see leftover.claim)
	// By kind, for the failover rows: an acknowledged useVerificationToken
	// whose token is back, an acknowledged deleteUser whose user or one of
	// whose sessions is back, an acknowledged createSession whose session
	// is gone.
	tokensBack, deletedBack, sessionsBack, sessionsLost int
	// The failover runs' session operations (checkSessionOps): sessions
	// ended by an acknowledged deleteSessionsByUserId checked, and
	// readable again; acknowledged refresh-token rotations checked, and
	// rotated tokens accepted again.
	revoked, revokedBack, rotated, rotationsBack int
}

// delDetail says what the acknowledged deleteUser of u returned and when it
// ran.
func (u *userRec) delDetail() string {
	got := "returned the user"
	if !u.delFound {
		got = "returned nil, nil: no such user"
	}
	return fmt.Sprintf("the call %v and %s", u.delCall, got)
}

// check compares what load l had acknowledged with what the server holds.
// A record touched by a call that failed after the acknowledged write
// (a deleteUser, an updateSession, a useVerificationToken) may or may not
// have been changed by it, so only the outcomes it allows are accepted.
//
// crash, when not zero, is when a server that is not durable was killed: a
// record left of a user whose deleteUser was acknowledged before it counts
// as lost (the crash undid part of the delete), not as a partial cascade.
func check(ctx context.Context, rv raw, l *load, crash time.Time) (checked, error) {
	var c checked
	if s, ok := rv.(snapshotter); ok {
		snap, err := s.snapshot(ctx)
		if err != nil {
			return c, err
		}
		rv = snap
	}
	lost := func(format string, args ...any) { c.lost = append(c.lost, fmt.Sprintf(format, args...)) }
	for _, u := range l.t.users {
		if !u.delAck {
			if err := checkSessionOps(ctx, rv, l.iss, u, &c); err != nil {
				return c, err
			}
		}
		if u.delAck {
			c.acked++
			found, err := rv.user(ctx, u.id)
			if err != nil {
				return c, err
			}
			if found {
				c.deletedBack++
				lost("user %s: deleteUser was acknowledged (%s), but the user is still there", u.id, u.delDetail())
			}
			left, err := rv.leftovers(ctx, u)
			if err != nil {
				return c, err
			}
			for _, l := range left {
				if !l.claim && (strings.Contains(l.what, "session:{") || strings.Contains(l.what, ":sessions")) {
					c.sessionsBack++
				}
				msg := fmt.Sprintf("user %s deleted (acknowledged: %s) but %s is left", u.id, u.delDetail(), l.what)
				switch {
				case l.claim:
					c.claims = append(c.claims, msg)
				case !crash.IsZero() && u.delAckAt.Before(crash):
					lost("%s: the deletion was acknowledged before the crash of a server that is not durable", msg)
				default:
					c.partial = append(c.partial, msg)
				}
			}
			continue
		}
		if u.delTried || !u.userAck {
			continue // deleted or not: both are allowed
		}
		c.acked++
		found, err := rv.user(ctx, u.id)
		if err != nil {
			return c, err
		}
		if !found {
			lost("user %s: createUser was acknowledged, the user is not there", u.id)
		}
		if u.accAck {
			c.acked++
			uid, found, err := rv.account(ctx, u.account)
			if err != nil {
				return c, err
			}
			if !found || uid != u.id {
				lost("account %v of user %s: linkAccount was acknowledged, found=%v userId=%q", u.account, u.id, found, uid)
			}
		}
		if u.sessAck {
			c.acked++
			uid, exp, found, err := rv.session(ctx, u.session)
			if err != nil {
				return c, err
			}
			switch {
			case !found || uid != u.id:
				c.sessionsLost++
				lost("session %s of user %s: acknowledged, found=%v userId=%q", u.session, u.id, found, uid)
			case !slices.ContainsFunc(u.sessExpires, func(t time.Time) bool { return t.Equal(exp) }):
				lost("session %s of user %s: expires %v, want the acknowledged %v (or one of %v)",
					u.session, u.id, exp.UTC(), u.sessExpires[0], u.sessExpires[1:])
			}
		}
		if u.credAck {
			c.acked++
			uid, found, err := rv.authenticator(ctx, u.cred)
			if err != nil {
				return c, err
			}
			if !found || uid != u.id {
				lost("authenticator %s of user %s: acknowledged, found=%v userId=%q", u.cred, u.id, found, uid)
			}
		}
	}
	for _, tok := range l.t.tokens {
		if !tok.createAck {
			continue
		}
		if tok.useTried && !tok.useAck {
			continue // used or not: both are allowed
		}
		c.acked++
		found, err := rv.token(ctx, tok.key)
		if err != nil {
			return c, err
		}
		if tok.useAck && found {
			c.tokensBack++
			lost("verification token %s: used (acknowledged, the call %v) but still there", tok.key.Identifier, tok.useCall)
		}
		if !tok.useAck && !found {
			lost("verification token %s: created (acknowledged) but not there", tok.key.Identifier)
		}
	}
	return c, nil
}
