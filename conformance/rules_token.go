package conformance

import (
	"slices"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/coretest"
)

func tokenRules() []rule {
	return slices.Concat(createTokenRules(), useTokenRules())
}

// createTokenRules are the rules of createVerificationToken.
func createTokenRules() []rule {
	return []rule{
		{group: string(createToken), name: "round_trip", needs: []core.Method{useToken}, run: func(t *testing.T, e *env) {
			v := e.newToken()
			v.Expires = future().In(time.FixedZone("UTC+9", 9*3600))
			want := v.Normalize()
			got, err := e.a.CreateVerificationToken(e.ctx, v)
			expectOptional(t, err, "createVerificationToken result", got, want, expectToken)
			expectEqual(t, "stored verification tokens", e.state(t).VerificationTokens, []core.VerificationToken{want})
			expectToken(t, "useVerificationToken", e.useToken(t, v.Identifier, v.Token), want)
		}},
		{group: string(createToken), name: "duplicate_rejected", run: func(t *testing.T, e *env) {
			v := e.newToken()
			e.createToken(t, v)
			dup := v
			dup.Expires = v.Expires.Add(time.Hour)
			e.expectRefused(t, "createVerificationToken of an existing (identifier, token)", "the rejected createVerificationToken", core.ErrAlreadyExists, func() error {
				return errOf(e.a.CreateVerificationToken(e.ctx, dup))
			})
		}},
		{group: string(createToken), name: "same_token_other_identifier", needs: []core.Method{useToken}, run: func(t *testing.T, e *env) {
			v := e.newToken()
			w := e.newToken()
			w.Token = v.Token
			e.createToken(t, v)
			e.createToken(t, w)
			expectToken(t, "use of the first", e.useToken(t, v.Identifier, v.Token), v.Normalize())
			expectToken(t, "use of the second", e.useToken(t, w.Identifier, w.Token), w.Normalize())
		}},
		{group: string(createToken), name: "empty_fields_rejected", run: func(t *testing.T, e *env) {
			expectInvalid(t, e, "createVerificationToken", e.a.CreateVerificationToken, map[string]core.VerificationToken{
				"empty identifier": {Token: "t", Expires: future()},
				"empty token":      {Identifier: "a@example.com", Expires: future()},
				"zero expires":     {Identifier: "a@example.com", Token: "t"},
			})
		}},
	}
}

// useTokenRules are the rules of useVerificationToken.
func useTokenRules() []rule {
	return []rule{
		{group: string(useToken), name: "returns_token_once", needs: []core.Method{createToken}, run: func(t *testing.T, e *env) {
			v, other := e.newToken(), e.newToken()
			e.createToken(t, v)
			e.createToken(t, other)
			expectToken(t, "first use", e.useToken(t, v.Identifier, v.Token), v.Normalize())
			if again := e.useToken(t, v.Identifier, v.Token); again != nil {
				t.Errorf("second use = %s, want nil", show(again))
			}
			expectEqual(t, "stored verification tokens", e.state(t).VerificationTokens, []core.VerificationToken{other.Normalize()})
		}},
		{group: string(useToken), name: "wrong_identifier_keeps_token", needs: []core.Method{createToken}, run: func(t *testing.T, e *env) {
			v := e.newToken()
			e.createToken(t, v)
			if got := e.useToken(t, "someone-else@example.com", v.Token); got != nil {
				t.Errorf("use with another identifier = %s, want nil", show(got))
			}
			expectEqual(t, "stored verification tokens", e.state(t).VerificationTokens, []core.VerificationToken{v.Normalize()})
			expectToken(t, "use with the right identifier", e.useToken(t, v.Identifier, v.Token), v.Normalize())
		}},
		{group: string(useToken), name: "wrong_token_is_nil", needs: []core.Method{createToken}, run: func(t *testing.T, e *env) {
			v := e.newToken()
			e.createToken(t, v)
			for _, tok := range []string{"hash-other", v.Token + "x", v.Token[:len(v.Token)-1], ""} {
				got, err := e.a.UseVerificationToken(e.ctx, core.VerificationTokenKey{Identifier: v.Identifier, Token: tok})
				if got != nil {
					t.Errorf("use with token %q = %s, want nil", tok, show(got))
				}
				if err != nil && tok != "" {
					t.Errorf("use with token %q: %v, want nil, nil", tok, err)
				}
			}
			expectEqual(t, "stored verification tokens", e.state(t).VerificationTokens, []core.VerificationToken{v.Normalize()})
		}},
		{group: string(useToken), name: "expired_never_accepted", needs: []core.Method{createToken}, run: func(t *testing.T, e *env) {
			v := e.newToken()
			v.Expires = time.Now().Add(-time.Second)
			e.createToken(t, v)
			if got := e.useToken(t, v.Identifier, v.Token); got != nil {
				t.Errorf("use of an expired token = %s, want nil", show(got))
			}
			if got := e.useToken(t, v.Identifier, v.Token); got != nil {
				t.Errorf("second use of an expired token = %s, want nil", show(got))
			}
		}},
		{group: string(useToken), name: "single_use_under_concurrency", needs: []core.Method{createToken}, run: func(t *testing.T, e *env) {
			const n = 50
			v := e.newToken()
			e.createToken(t, v)
			results := make([]*core.VerificationToken, n)
			errs := make([]error, n)
			coretest.Concurrently(n, func(i int) {
				results[i], errs[i] = e.a.UseVerificationToken(e.ctx, v.Key())
			})
			won := 0
			for i := range n {
				if errs[i] != nil {
					t.Errorf("concurrent use %d: %v", i, errs[i])
				}
				if results[i] != nil {
					won++
				}
			}
			if won != 1 {
				t.Errorf("%d of %d concurrent uses of one token succeeded, want exactly 1", won, n)
			}
			if s := e.state(t).VerificationTokens; len(s) != 0 {
				t.Errorf("tokens left after use: %s", show(s))
			}
		}},
		{group: string(useToken), name: "bad_keys_never_panic", needs: []core.Method{createToken}, run: func(t *testing.T, e *env) {
			v := e.newToken()
			e.createToken(t, v)
			before := e.state(t)
			for name, s := range badStrings() {
				for _, key := range []core.VerificationTokenKey{{Identifier: s, Token: v.Token}, {Identifier: v.Identifier, Token: s}} {
					got, err := e.a.UseVerificationToken(e.ctx, key)
					if err == nil && got != nil {
						t.Errorf("use with %s returned %s", name, show(got))
					}
				}
			}
			e.expectUnchanged(t, before, "useVerificationToken with keys that match nothing")
		}},
	}
}

// purgeRules check core.ExpiredPurger, which is not a spec method: adapters
// whose store expires records by itself need not offer it.
func purgeRules() []rule {
	return []rule{
		{group: "purgeExpired", name: "removes_only_expired", needsPurge: true, needs: []core.Method{createUser, createSession, createToken}, run: func(t *testing.T, e *env) {
			u := e.storedUser(t)
			live, dead := e.newSession(u.ID), e.newSession(u.ID)
			dead.Expires = time.Now().Add(-time.Minute)
			e.createSession(t, live)
			e.createSession(t, dead)
			liveTok, deadTok := e.newToken(), e.newToken()
			deadTok.Expires = time.Now().Add(-time.Minute)
			e.createToken(t, liveTok)
			e.createToken(t, deadTok)
			res, err := e.purger.PurgeExpired(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			s := e.state(t)
			expectEqual(t, "sessions left", s.Sessions, []core.Session{live.Normalize()})
			expectEqual(t, "tokens left", s.VerificationTokens, []core.VerificationToken{liveTok.Normalize()})
			if res.Sessions != 1 || res.VerificationTokens != 1 {
				t.Errorf("PurgeExpired reported %+v, want 1 session and 1 verification token", res)
			}
		}},
	}
}
