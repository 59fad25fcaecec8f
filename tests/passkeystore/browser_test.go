package passkeystore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/conformance/provision"
	"github.com/authport/authport/passkey/passkeytest"
)

// TestBrowserScript runs passkey.Script in Chromium with a virtual
// authenticator (the WebAuthn domain of the DevTools protocol): a sign-up
// with an e-mail address, then a sign-in with the discoverable passkey,
// through a minimal page with the handler's form contract.
func TestBrowserScript(t *testing.T) {
	// scripts/services.sh installs Debian's chromium and prints the variable.
	bin := os.Getenv("AUTHPORT_CHROMIUM_BIN")
	switch {
	case bin != "":
	case provision.Required("chromium"):
		t.Fatal("no Chromium: set AUTHPORT_CHROMIUM_BIN (AUTHPORT_REQUIRE requires chromium)")
	default:
		t.Skip("no Chromium: set AUTHPORT_CHROMIUM_BIN to a chromium binary")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	site := fmt.Sprintf("http://localhost:%d", port) // a secure context with RP ID localhost
	store := memory.New()
	pk := passkeytest.NewEnvWith(t, store, passkeytest.EnvOptions{
		BaseURL: site + "/auth",
		// The page script's sign-up while signed out (Auth.js's flow),
		// which authport refuses by default.
		AllowDangerousUnverifiedEmail: true,
	}).Client.Passkeys
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'self'") // no inline script
		fmt.Fprint(w, `<!doctype html><html><body>
<form class="passkey" method="post" action="/auth/callback/passkey" data-authport-passkey data-options-url="/auth/webauthn-options/passkey">
<input type="hidden" name="csrfToken" value="t"><input type="hidden" name="callbackUrl" value="/">
<input type="hidden" name="action" value=""><input type="hidden" name="data" value="">
<input id="email" name="email" type="email">
<button id="go" type="submit">Sign in with Passkey</button>
<p id="error" data-authport-passkey-error></p>
</form>
<script src="/auth/passkey.js" defer></script>
</body></html>`)
	})
	mux.HandleFunc("GET /auth/passkey.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write(pk.Script())
	})
	// The challenge is kept as the handler keeps it, in a cookie, here
	// unsealed (the handler's sealing is tested in the handler module).
	mux.HandleFunc("GET /auth/webauthn-options/passkey", func(w http.ResponseWriter, r *http.Request) {
		body, challenge, err := pk.Options(r.Context(), "passkey", r.URL.Query(), nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "challenge", Value: base64.RawURLEncoding.EncodeToString([]byte(challenge)), Path: "/", HttpOnly: true, MaxAge: int(pk.Timeout() / time.Second)})
		w.Header().Set("Content-Type", "application/json")
		_ = jsonEncode(w, body)
	})
	mux.HandleFunc("POST /auth/callback/passkey", func(w http.ResponseWriter, r *http.Request) {
		var challenge []byte
		if c, err := r.Cookie("challenge"); err == nil {
			challenge, _ = base64.RawURLEncoding.DecodeString(c.Value)
		}
		http.SetCookie(w, &http.Cookie{Name: "challenge", Path: "/", MaxAge: -1})
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s, err := pk.Callback(r.Context(), "passkey", r.PostForm, string(challenge), nil)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `<p id="result">error: %s</p>`, html.EscapeString(err.Error()))
			return
		}
		fmt.Fprintf(w, `<p id="result">signed in as %s new=%v</p>`, html.EscapeString(s.User.Email), s.IsNewUser)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()

	if err := chromedp.Do(ctx, chromedp.Navigate(site+"/login")); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	added, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol:                    webauthn.AuthenticatorProtocolCtap2,
		Transport:                   webauthn.AuthenticatorTransportInternal,
		HasResidentKey:              true,
		HasUserVerification:         true,
		IsUserVerified:              true,
		AutomaticPresenceSimulation: true,
	}})
	if err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
	result := func(email string) string {
		t.Helper()
		steps := []chromedp.Action[chromedp.Void]{chromedp.Navigate(site + "/login"), chromedp.WaitVisible("#go")}
		if email != "" {
			steps = append(steps, chromedp.SendKeys("#email", email))
		}
		steps = append(steps, chromedp.Click("#go"), chromedp.WaitVisible("#result"))
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("ceremony with e-mail %q: %v", email, err)
		}
		text, err := chromedp.Run(ctx, chromedp.Text("#result"))
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	if got := result("ada@example.com"); got != "signed in as ada@example.com new=true" {
		t.Fatalf("sign-up: %q", got)
	}
	if got := result(""); got != "signed in as ada@example.com new=false" {
		t.Fatalf("sign-in: %q", got)
	}
	got, err := chromedp.Call(ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams{AuthenticatorID: added.AuthenticatorID})
	creds := got.Credentials
	if err != nil || len(creds) != 1 {
		t.Fatalf("virtual authenticator credentials: %d, %v", len(creds), err)
	}
	stored, err := store.GetAuthenticator(context.Background(), base64.StdEncoding.EncodeToString(creds[0].CredentialID))
	if err != nil || stored == nil {
		t.Fatalf("the browser's credential %q is not stored: %v", creds[0].CredentialID, err)
	}
	if stored.Counter != int64(creds[0].SignCount) {
		t.Errorf("stored counter %d, authenticator's %v", stored.Counter, creds[0].SignCount)
	}
	if stored.Transports == nil || !strings.Contains(*stored.Transports, "internal") {
		t.Errorf("stored transports %v", stored.Transports)
	}

}

func jsonEncode(w http.ResponseWriter, v any) error { return json.NewEncoder(w).Encode(v) }
