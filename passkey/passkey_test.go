package passkey_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/passkey"
	"github.com/authport/authport/passkey/internal/refusal"
	"github.com/authport/authport/passkey/passkeytest"
)

// The ceremony scenarios on the memory adapter; tests/passkeystore runs
// them on real servers (Redis, PostgreSQL).
func TestCeremonies(t *testing.T) {
	passkeytest.Run(t, func(t *testing.T) passkeytest.Store { return memory.New() })
}

func TestChallenge(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	// The challenge expires on the Auth's clock.
	e := passkeytest.NewEnvWith(t, memory.New(), passkeytest.EnvOptions{Now: func() time.Time { return clock() }})
	sa := e.NewAuthenticator()
	kUser := e.SignUp("k@example.com", sa)

	o, challenge := e.MustOptions("", nil)
	data := e.Get(sa, o, passkeytest.Ceremony{Origin: passkeytest.Origin})
	if _, err := e.Callback("", "authenticate", data, nil); !refused(err, refusal.ErrChallengeMissing) {
		t.Errorf("no challenge: %v", err)
	}
	for name, bad := range map[string]string{
		"not JSON":     challenge[:len(challenge)-2],
		"no challenge": `{"action":"authenticate","provider":"passkey"}`,
		"another one":  strings.Replace(challenge, `"challenge":"`, `"challenge":"x`, 1),
	} {
		if _, err := e.Callback(bad, "authenticate", data, nil); !refused(err, refusal.ErrChallengeMissing) {
			t.Errorf("%s: %v", name, err)
		}
	}
	now = now.Add(2*time.Minute + time.Second)
	if _, err := e.Callback(challenge, "authenticate", data, nil); !refused(err, refusal.ErrChallengeExpired) {
		t.Errorf("expired challenge: %v", err)
	}
	if got := e.StoredCounter(sa); got != 0 {
		t.Errorf("counter %d after refused callbacks", got)
	}
	// The challenge of a registration cannot serve an authentication.
	now = time.Now()
	reg, regChallenge := e.MustOptions("action=register", &kUser)
	if reg.Action != "register" {
		t.Fatal(reg.Action)
	}
	o2, _ := e.MustOptions("", nil)
	if _, err := e.Callback(regChallenge, "authenticate", e.Get(sa, o2, passkeytest.Ceremony{Origin: passkeytest.Origin}), nil); !refused(err, refusal.ErrInvalidAction) {
		t.Errorf("registration challenge for an authentication: %v", err)
	}
	// Within its lifetime the challenge works.
	o3, c3 := e.MustOptions("", nil)
	now = now.Add(time.Minute)
	if _, err := e.Callback(c3, "authenticate", e.Get(sa, o3, passkeytest.Ceremony{Origin: passkeytest.Origin}), nil); err != nil {
		t.Errorf("a challenge within its lifetime: %v", err)
	}
}

// refused reports whether err is a refusal for the check with the code
// the handler shows for it.
func refused(err, check error) bool {
	return errors.Is(err, check) && auth.CodeOf(err) == auth.CodeWebAuthnVerification
}

// On https the relying party is BaseURL's host (the challenge cookie's
// __Secure- name is the handler's, tested there).
func TestOptionsOnHTTPS(t *testing.T) {
	e := passkeytest.NewEnvWith(t, memory.New(), passkeytest.EnvOptions{BaseURL: "https://example.com/auth"})
	o, c := e.MustOptions("", nil)
	if c == "" || e.Client.Passkeys.Timeout() != 2*time.Minute {
		t.Fatalf("challenge %q, timeout %v", c, e.Client.Passkeys.Timeout())
	}
	if o.Options.RPID != "example.com" || o.Action != "authenticate" {
		t.Fatalf("options on https: %+v", o)
	}
}

func TestNew(t *testing.T) {
	a, err := auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{provider.Passkey()}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}})
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]passkey.Config{
		"no auth":        {},
		"IP RP ID":       {Auth: a, RPID: "127.0.0.1"},
		"bad origin":     {Auth: a, Origins: []string{"localhost:3000"}},
		"negative time":  {Auth: a, Timeout: -time.Second},
		"origin w/ path": {Auth: a, Origins: []string{"https://example.com/app"}},
	} {
		if _, err := passkey.New(cfg); !errors.Is(err, core.ErrInvalidConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
	pk, err := passkey.New(passkey.Config{Auth: a, RPID: "example.com", Origins: []string{"https://example.com", "https://app.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	// Not a WebAuthn provider.
	if _, _, err := pk.Options(context.Background(), "github", nil, nil); !errors.Is(err, core.ErrNotFound) {
		t.Errorf("unknown provider: %v", err)
	}
}

// Config's RPID and Origins apply when the provider has none, and the
// provider's win when it has them.
func TestRelyingPartySettings(t *testing.T) {
	own := &provider.WebAuthnConfig{ID: "corp", Name: "Corp key", RPID: "corp.example", RPOrigin: "https://login.corp.example"}
	a, err := auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{provider.Passkey(), own}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}})
	if err != nil {
		t.Fatal(err)
	}
	pk, err := passkey.New(passkey.Config{Auth: a, RPID: "example.com", RPName: "Example", Origins: []string{"https://example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"passkey": `"rp":{"name":"Example","id":"example.com"}`, "corp": `"rp":{"name":"Example","id":"corp.example"}`} {
		body, _, err := pk.Options(context.Background(), id, url.Values{"action": {"register"}}, &core.User{ID: "u1", Email: "a@b.c"})
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(body)
		if !strings.Contains(string(raw), want) {
			t.Errorf("%s: %s lacks %s", id, raw, want)
		}
	}
}

func TestScript(t *testing.T) {
	e := passkeytest.NewEnv(t, memory.New())
	pk := e.Client.Passkeys
	js := string(pk.Script())
	for _, want := range []string{
		"form[data-authport-passkey]", "data-options-url", `"email"`, `"action"`, `"data"`,
		"navigator.credentials.create", "navigator.credentials.get", "authenticate", "register",
	} {
		if !strings.Contains(js, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Contains(js, "onclick") || strings.Contains(js, "eval(") {
		t.Error("script uses inline handlers or eval")
	}
	b := pk.Script()
	b[0] = 'X'
	if pk.Script()[0] == 'X' {
		t.Error("Script returns its own buffer")
	}
}

// handlerPasskeys mirrors the Passkeys interface of the handler module
// (handler/passkeys.go), which *passkey.Passkeys implements.
type handlerPasskeys interface {
	Options(ctx context.Context, providerID string, query url.Values, user *core.User) (body any, challenge string, err error)
	Callback(ctx context.Context, providerID string, form url.Values, challenge string, user *core.User) (*auth.SignIn, error)
	Timeout() time.Duration
	Script() []byte
}

var _ handlerPasskeys = (*passkey.Passkeys)(nil)

// The relying party never comes from the request (the ceremonies are not
// given one): a Host header names no RP ID or origin, so New refuses a
// configuration that leaves the relying party to it.
func TestRelyingPartyNotFromRequest(t *testing.T) {
	noBase, err := auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{provider.Passkey()}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}})
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]passkey.Config{
		"nothing":      {Auth: noBase},
		"RPID only":    {Auth: noBase, RPID: "example.com"},
		"origins only": {Auth: noBase, Origins: []string{"https://example.com"}},
	} {
		if _, err := passkey.New(cfg); !errors.Is(err, core.ErrInvalidConfig) {
			t.Errorf("%s: New = %v, want ErrInvalidConfig (the relying party would come from the Host header)", name, err)
		}
	}
	// A provider with its own RP ID and origin needs nothing else.
	own := &provider.WebAuthnConfig{ID: "corp", Name: "Corp key", RPID: "corp.example", RPOrigin: "https://login.corp.example"}
	a, err := auth.New(auth.Config{Adapter: memory.New(), Providers: []provider.Provider{own}, Secrets: []string{"s-0123456789abcdefghijklmnopqrst"}, Session: auth.SessionOptions{Strategy: auth.StrategyJWT}})
	if err != nil {
		t.Fatal(err)
	}
	pk, err := passkey.New(passkey.Config{Auth: a})
	if err != nil {
		t.Fatal(err)
	}
	body, _, err := pk.Options(context.Background(), "corp", url.Values{"action": {"register"}}, &core.User{ID: "u1", Email: "a@b.c"})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(body)
	if !strings.Contains(string(raw), `"id":"corp.example"`) {
		t.Errorf("options: %s", raw)
	}
}

// A challenge serves one ceremony: an authenticator without a counter
// (it reports 0 every time, as synced passkeys do) cannot have its
// assertion replayed with the same challenge (the handler's cookie
// replayed), even concurrently.
func TestChallengeSingleUse(t *testing.T) {
	e := passkeytest.NewEnv(t, memory.New())
	sa := e.NewAuthenticator()
	onceUser := e.SignUp("once@example.com", sa)
	zero := uint32(0)
	o, challenge := e.MustOptions("", nil)
	data := e.Get(sa, o, passkeytest.Ceremony{Origin: passkeytest.Origin, Counter: &zero})
	const n = 8
	var wins, reused int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			_, err := e.Callback(challenge, "authenticate", data, nil)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case refused(err, refusal.ErrChallengeReused):
				reused++
			default:
				t.Errorf("replay: %v", err)
			}
		})
	}
	wg.Wait()
	if wins != 1 || reused != n-1 {
		t.Fatalf("%d sign-ins, %d refused as reused of %d uses of one challenge; want exactly one sign-in", wins, reused, n)
	}
	// Registration too: one options answer registers one credential.
	ro, rc := e.MustOptions("action=register", &onceUser)
	reg := e.Create(e.NewAuthenticator(), ro, passkeytest.Ceremony{Origin: passkeytest.Origin})
	if _, err := e.Callback(rc, "register", reg, &onceUser); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Callback(rc, "register", e.Create(e.NewAuthenticator(), ro, passkeytest.Ceremony{Origin: passkeytest.Origin}), &onceUser); !refused(err, refusal.ErrChallengeReused) {
		t.Fatalf("second registration with one challenge: %v", err)
	}
}
