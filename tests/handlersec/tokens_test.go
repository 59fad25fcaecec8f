package handlersec

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/coretest"
	"github.com/authport/authport/handler"
	"github.com/authport/authport/tokens"
)

// The token families of module tokens through HTTP (POST /auth/token) on
// each real store: the race (50 concurrent refreshes on two instances,
// exactly one successor), reuse ending the family, and the lost reply's
// retry getting the same successor once. The conformance suite's
// tokenFamilies rules prove the same of core/auth's rotation on every
// backend; these add the handler, the sealing and the token responses.

const tokensBase = "http://auth.test/auth"

// tokenInstance is one application instance: an Auth, its tokens.Issuer
// and its handler, on the shared store.
type tokenInstance struct {
	a   *auth.Auth
	iss *tokens.Issuer
	h   *handler.Handler
}

// tokenFamilies is two instances on one store, a stored user, and the
// clock they share.
type tokenFamilies struct {
	t     *testing.T
	store core.Adapter
	clock *coretest.Clock
	user  string
	insts [2]tokenInstance
}

func newTokenFamilies(t *testing.T, store core.Adapter) *tokenFamilies {
	t.Helper()
	f := &tokenFamilies{t: t, store: store, clock: coretest.NewClock(time.Now().UTC().Truncate(time.Second)), user: "7d0c2b4e-3f1a-4e5b-9c8d-1a2b3c4d5e6f"}
	if _, err := store.(core.UserCreator).CreateUser(context.Background(), core.User{ID: f.user, Email: "tokens@example.com"}); err != nil {
		t.Fatal(err)
	}
	key, err := tokens.GenerateKey(tokens.EdDSA, "k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := tokens.NewKeySet(key)
	for n := range f.insts {
		a, err := auth.New(auth.Config{Adapter: store, Secrets: []string{secret}, BaseURL: tokensBase, Now: f.clock.Now, Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		iss, err := tokens.New(tokens.Config{Auth: a, Keys: keys, Audience: []string{"https://api.test"}, Logger: discard(),
			Clients: []tokens.Client{{ID: "cli", Name: "Test CLI", RedirectURIs: []string{"http://127.0.0.1/cb"}}}})
		if err != nil {
			t.Fatal(err)
		}
		h, err := handler.New(handler.Config{Auth: a, Tokens: iss, Logger: discard()})
		if err != nil {
			t.Fatal(err)
		}
		f.insts[n] = tokenInstance{a, iss, h}
	}
	return f
}

// first starts a family through instance 0's Go API and returns its
// refresh token and session token.
func (f *tokenFamilies) first(iss *tokens.Issuer) string {
	f.t.Helper()
	r, err := iss.Issue(context.Background(), f.user, "cli", tokens.IssueOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return r.RefreshToken
}

// refresh posts grant_type=refresh_token to instance n's handler and
// returns the status and the decoded body.
func (f *tokenFamilies) refresh(n int, rt string) (int, map[string]any) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {"cli"}}
	req := httptest.NewRequest("POST", tokensBase+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	f.insts[n].h.ServeHTTP(rec, req)
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		f.t.Errorf("POST /token: %d %s", rec.Code, rec.Body)
	}
	return rec.Code, body
}

// families returns how many of the user's sessions exist, or -1 when the
// store cannot list them (listSessionsByUserId not implemented yet).
func (f *tokenFamilies) families() int {
	f.t.Helper()
	if !core.Probe(f.store).HasExtension(core.ExtensionListSessionsByUserID) {
		return -1
	}
	ids, err := f.insts[0].a.Edge().UserSessionIDs(context.Background(), f.user)
	if err != nil {
		f.t.Fatal(err)
	}
	return len(ids)
}

func (f *tokenFamilies) wantRefused(n int, rt, what string) {
	f.t.Helper()
	if status, body := f.refresh(n, rt); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		f.t.Errorf("%s: %d %v; want 400 invalid_grant", what, status, body)
	}
}

func (f *tokenFamilies) issuer(n int) *tokens.Issuer { return f.insts[n].iss }

// TestTokenRefreshRaceOnStores: 50 concurrent refreshes of one refresh
// token on two instances give exactly one successor; the 49 others are
// reuse, which ends the family, so the successor is refused too.
func TestTokenRefreshRaceOnStores(t *testing.T) {
	forTokenStores(t, func(t *testing.T, f *tokenFamilies) {
		r0 := f.first(f.issuer(0))
		var mu sync.Mutex
		var successors []string
		coretest.Concurrently(50, func(i int) {
			status, body := f.refresh(i%2, r0)
			switch {
			case status == http.StatusOK:
				mu.Lock()
				successors = append(successors, body["refresh_token"].(string))
				mu.Unlock()
			case status != http.StatusBadRequest || body["error"] != "invalid_grant":
				t.Errorf("refresh %d: %d %v; want 200 or 400 invalid_grant", i, status, body)
			}
		})
		if len(successors) != 1 {
			t.Fatalf("%d successors; want exactly 1", len(successors))
		}
		if n := f.families(); n > 0 {
			t.Errorf("%d sessions after the concurrent reuse; want the family ended", n)
		}
		f.wantRefused(1, successors[0], "the successor after the family ended")
	})
}

// TestTokenReuseEndsFamilyOnStores: a rotated refresh token presented
// again (after the retry window) ends the family: its session is gone and
// the current successor no longer works.
func TestTokenReuseEndsFamilyOnStores(t *testing.T) {
	forTokenStores(t, func(t *testing.T, f *tokenFamilies) {
		r0 := f.first(f.issuer(0))
		status, b1 := f.refresh(0, r0)
		if status != http.StatusOK {
			t.Fatalf("refresh r0: %d %v", status, b1)
		}
		f.clock.Add(time.Minute)
		status, b2 := f.refresh(1, b1["refresh_token"].(string))
		if status != http.StatusOK {
			t.Fatalf("refresh r1 on the other instance: %d %v", status, b2)
		}
		if n := f.families(); n == 0 || n > 1 {
			t.Fatalf("%d sessions; want the family's one", n)
		}
		f.clock.Add(time.Minute)
		f.wantRefused(0, b1["refresh_token"].(string), "r1 presented again")
		if n := f.families(); n > 0 {
			t.Errorf("%d sessions after reuse; want the family ended", n)
		}
		f.wantRefused(1, b2["refresh_token"].(string), "r2 after the family ended")
	})
}

// TestTokenLostReplyRetryOnStores: a retry of a rotated refresh token
// (its reply was lost), a few seconds later from the same client, gets
// the same successor once; a second retry is reuse.
func TestTokenLostReplyRetryOnStores(t *testing.T) {
	forTokenStores(t, func(t *testing.T, f *tokenFamilies) {
		r0 := f.first(f.issuer(0))
		status, lost := f.refresh(0, r0)
		if status != http.StatusOK {
			t.Fatalf("refresh r0: %d %v", status, lost)
		}
		f.clock.Add(3 * time.Second)
		status, retry := f.refresh(1, r0)
		if status != http.StatusOK {
			t.Fatalf("the retry: %d %v; want the successor", status, retry)
		}
		// The same successor: generation 1 of the family, current.
		for _, rt := range []any{lost["refresh_token"], retry["refresh_token"]} {
			in, err := f.issuer(1).Introspect(context.Background(), rt.(string))
			if err != nil || !in.Active {
				t.Fatalf("Introspect(successor) = %+v, %v; want active", in, err)
			}
		}
		f.clock.Add(time.Second)
		f.wantRefused(0, r0, "a second retry")
		if n := f.families(); n > 0 {
			t.Errorf("%d sessions after the second retry; want the family ended", n)
		}
	})
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// forTokenStores runs the test on every store, fresh for each.
func forTokenStores(t *testing.T, run func(t *testing.T, f *tokenFamilies)) {
	for _, st := range testStores {
		t.Run(st.name, func(t *testing.T) { run(t, newTokenFamilies(t, st.open(t))) })
	}
}
