package handler

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/ratelimit"
)

// DefaultRateLimit returns the limits a zero [RateLimit] applies (Auth.js
// has none):
//
//   - EmailPerAddress: 5 sign-in e-mails to one address per hour (then one
//     every 12 minutes);
//   - EmailPerClient: 20 sign-in e-mails requested by one client per hour,
//     whatever the addresses;
//   - SignInPerClient: 60 other sign-in attempts (OAuth starts,
//     credentials, passkeys, e-mail links) by one client per 10 minutes;
//   - SignInPerIdentifier: 10 credentials attempts for one identifier (the
//     posted email, username or identifier, normalised as the lookup
//     normalises it) per 15 minutes.
func DefaultRateLimit() RateLimit {
	return RateLimit{
		EmailPerAddress:     ratelimit.Limit{Events: 5, Period: time.Hour},
		EmailPerClient:      ratelimit.Limit{Events: 20, Period: time.Hour},
		SignInPerClient:     ratelimit.Limit{Events: 60, Period: 10 * time.Minute},
		SignInPerIdentifier: ratelimit.Limit{Events: 10, Period: 15 * time.Minute},
	}
}

// RateLimit limits sign-in e-mails and other sign-in attempts, per
// identifier (the e-mail address, the credentials' email or username) and
// per client (its IP address; an IPv6 address counts by its /64). A refused
// request gets the error code RateLimited: a redirect to the sign-in page
// with ?error=RateLimited, or 429 JSON for a script, with Retry-After.
//
// The zero value is the safe default: the limits of [DefaultRateLimit],
// counted in process. Several instances behind a load balancer need a shared Store
// (e.g. github.com/authport/authport/adapters/redis/ratelimit), or each
// allows the whole limit.
type RateLimit struct {
	// Disabled turns every limit off: Auth.js's behaviour.
	Disabled bool
	// Store counts the attempts; nil means an in-process
	// [ratelimit.Memory]. If it fails, the request fails (Configuration)
	// rather than going unlimited.
	Store ratelimit.Store
	// EmailPerAddress, EmailPerClient, SignInPerClient and
	// SignInPerIdentifier are the limits; a zero Limit means its
	// [DefaultRateLimit] value, one with negative Events turns that limit
	// off.
	EmailPerAddress, EmailPerClient, SignInPerClient, SignInPerIdentifier ratelimit.Limit
	// ClientKey returns the client's key for per-client limits; nil means
	// the client's IP address ([ClientIP], with Config.TrustedProxies),
	// an IPv6 address by its /64.
	ClientKey func(*http.Request) string
}

// ErrorRateLimited is the error code of a request refused by [RateLimit].
// Auth.js has no such code; it is shown on the sign-in page.
const ErrorRateLimited = "RateLimited"

// limiter applies a RateLimit.
type limiter struct {
	store     ratelimit.Store
	attempts  [2]attemptLimits // by attemptKind
	clientKey func(*http.Request) string
}

// attemptKind is a kind of rate-limited attempt.
type attemptKind int

const (
	emailAttempt  attemptKind = iota // a sign-in e-mail requested
	signInAttempt                    // another sign-in attempt
)

// attemptLimits are the limits of one attemptKind, per client and per
// identifier, each with the kind its counters are stored under.
type attemptLimits struct {
	clientKind, idKind string
	client, id         ratelimit.Limit
}

func newLimiter(cfg RateLimit, trusted []netip.Prefix, now func() time.Time) (*limiter, error) {
	if cfg.Disabled {
		return nil, nil
	}
	l := &limiter{store: cfg.Store, clientKey: cfg.ClientKey, attempts: [2]attemptLimits{
		emailAttempt:  {clientKind: "email-client", idKind: "email-address"},
		signInAttempt: {clientKind: "signin-client", idKind: "signin-identifier"},
	}}
	if l.store == nil {
		l.store = ratelimit.NewMemory(ratelimit.WithClock(now))
	}
	pick := func(name string, v, def ratelimit.Limit) (ratelimit.Limit, error) {
		switch {
		case v == ratelimit.Limit{}:
			return def, nil
		case v.Events < 0:
			return ratelimit.Limit{}, nil
		case !v.Enabled():
			return v, fmt.Errorf("%w: RateLimit.%s %+v needs Events > 0 and Period > 0 (or negative Events to turn it off)", core.ErrInvalidConfig, name, v)
		}
		return v, nil
	}
	def := DefaultRateLimit()
	var err error
	email, signIn := &l.attempts[emailAttempt], &l.attempts[signInAttempt]
	if email.id, err = pick("EmailPerAddress", cfg.EmailPerAddress, def.EmailPerAddress); err != nil {
		return nil, err
	}
	if email.client, err = pick("EmailPerClient", cfg.EmailPerClient, def.EmailPerClient); err != nil {
		return nil, err
	}
	if signIn.client, err = pick("SignInPerClient", cfg.SignInPerClient, def.SignInPerClient); err != nil {
		return nil, err
	}
	if signIn.id, err = pick("SignInPerIdentifier", cfg.SignInPerIdentifier, def.SignInPerIdentifier); err != nil {
		return nil, err
	}
	if l.clientKey == nil {
		l.clientKey = func(r *http.Request) string { return rateClient(r, trusted) }
	}
	return l, nil
}

// rateClient is the per-client key of rate limits: the client's address
// ([ClientIP]), an IPv6 address cut to its /64, which one client usually
// holds whole; the connection's address as given when it is not an IP.
func rateClient(r *http.Request, trusted []netip.Prefix) string {
	ip := ClientIP(r, trusted)
	switch {
	case !ip.IsValid():
		return "addr:" + r.RemoteAddr
	case ip.Is6():
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// rateKey is the store key of one limit: the kind and a hash of the value,
// so that addresses are not stored in the clear and keys stay short.
func rateKey(kind, value string) string {
	sum := sha256.Sum256([]byte(value))
	return "authport:rl:" + kind + ":" + hex.EncodeToString(sum[:16])
}

// check counts one event against each (limit, kind, value) in turn and
// returns the first refusal; a store failure is an error.
func (l *limiter) check(ctx context.Context, checks ...rateCheck) (ratelimit.Result, error) {
	for _, c := range checks {
		if !c.limit.Enabled() || c.value == "" {
			continue
		}
		res, err := l.store.Allow(ctx, rateKey(c.kind, c.value), c.limit)
		if err != nil {
			return ratelimit.Result{}, fmt.Errorf("rate limit %s: %w", c.kind, err)
		}
		if !res.Allowed {
			return res, nil
		}
	}
	return ratelimit.Result{Allowed: true}, nil
}

type rateCheck struct {
	kind, value string
	limit       ratelimit.Limit
}

// allow checks the limits of an attempt of the kind for identifier (for
// an e-mail the normalised address, or "" when it is invalid; else the
// identifier the sign-in names, "" for none) and answers the refusal
// itself, returning false.
func (h *Handler) allow(w http.ResponseWriter, r *http.Request, kind attemptKind, identifier string) bool {
	if h.limits == nil {
		return true
	}
	a := h.limits.attempts[kind]
	res, err := h.limits.check(r.Context(),
		rateCheck{a.clientKind, h.limits.clientKey(r), a.client},
		rateCheck{a.idKind, identifier, a.id})
	if err != nil {
		h.fail(w, r, ErrorConfiguration, err)
		return false
	}
	if res.Allowed {
		return true
	}
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(res.RetryAfter.Seconds()))))
	h.fail(w, r, ErrorRateLimited, fmt.Errorf("rate limit reached; retry in %v", res.RetryAfter.Round(time.Second)))
	return false
}

// credentialsIdentifier is the identifier a credentials sign-in names,
// keyed as the lookup resolves it ([rateIdentifier]): its email field, or
// else its username, or else its identifier field (as [Handler.passwordSignIn]
// reads them); "" when it has none.
func credentialsIdentifier(r *http.Request) string {
	return rateIdentifier(signInIdentifier(r))
}

// signInIdentifier is the identifier a sign-in POST names: its email
// field, or else its username, or else its identifier field.
func signInIdentifier(r *http.Request) string {
	for _, k := range []string{"email", "username", "identifier"} {
		if v := r.PostFormValue(k); strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// rateIdentifier is the per-identifier rate-limit key of what a user
// typed, in the form the lookup resolves it to, so that spellings of one
// address or username (case, soft hyphens, full-width letters) share one
// counter: with an "@", the address as [auth.NormalizeEmail] makes it;
// else the username, trimmed, as [core.NormalizeUsername] makes it. A value
// neither accepts (which password sign-in resolves to nobody, and a
// credentials provider's authorize may still accept) is counted trimmed
// and lowercased; "" for none.
func rateIdentifier(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	if strings.Contains(v, "@") {
		if email, err := auth.NormalizeEmail(v); err == nil {
			return "email:" + email
		}
		return "email:" + strings.ToLower(v)
	}
	if name, err := core.NormalizeUsername(v); err == nil {
		return "username:" + name
	}
	return "username:" + strings.ToLower(v)
}
