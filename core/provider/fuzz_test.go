package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/mail"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// fuzzProvider builds a provider of one of the five types from fuzzed
// fields: u1, u2 and u3 go to the type's URL-ish fields, checks is a
// comma-separated list, num to the type's number.
func fuzzProvider(kind uint8, id, name, clientID, u1, u2, u3, checks string, num int64) provider.Provider {
	var cs provider.Checks
	if checks != "" {
		for _, c := range strings.Split(checks, ",") {
			cs = append(cs, provider.Check(c))
		}
	}
	switch kind % 6 {
	case 0:
		return &provider.OAuth2Config[map[string]any]{
			ID: id, Name: name, ClientID: clientID,
			Authorization: provider.Endpoint{URL: u1}, Token: provider.TokenEndpoint{URL: u2},
			Userinfo: provider.UserinfoEndpoint[map[string]any]{URL: u3},
			Checks:   cs, Client: provider.ClientOptions{DefaultMaxAge: num, TokenEndpointAuthMethod: clientID},
		}
	case 1:
		return &provider.OAuth2Config[map[string]any]{
			ID: id, Name: name, ClientID: clientID, WellKnown: u1, JWKSEndpoint: u2, RedirectProxyURL: u3, Checks: cs,
		}
	case 2:
		return &provider.OIDCConfig[map[string]any]{OAuth2Config: provider.OAuth2Config[map[string]any]{
			ID: id, Name: name, ClientID: clientID, Issuer: u1, WellKnown: u2, RedirectProxyURL: u3, Checks: cs,
			Client: provider.ClientOptions{DefaultMaxAge: num},
		}}
	case 3:
		send := func(context.Context, provider.VerificationRequest) error { return nil }
		if num%2 == 0 {
			send = nil
		}
		return &provider.EmailConfig{ID: id, Name: name, From: u1, MaxAge: time.Duration(num), SendVerificationRequest: send}
	case 4:
		var fields []provider.CredentialField
		for _, f := range strings.Split(u1, ",") {
			fields = append(fields, provider.CredentialField{Name: f})
		}
		return &provider.CredentialsConfig{ID: id, Name: name, Fields: fields,
			Authorize: func(context.Context, provider.AuthorizeRequest) (*provider.User, error) { return nil, nil }}
	default:
		return &provider.WebAuthnConfig{ID: id, Name: name, RPID: u2, RPOrigin: u1, UserVerification: provider.UserVerification(u3)}
	}
}

// FuzzValidate checks provider configuration validation with fuzzed ids,
// names, URLs, checks and numbers, for every provider type, alone, next to
// a valid provider, and twice (a duplicate id). Validate never panics and
// never changes its input; it fails with a *ValidationError matching
// core.ErrInvalidConfig whose problems name a provider in the list, or it
// returns copies that satisfy the documented invariants: URL-safe unique
// ids, names set, absolute http(s) URLs, valid checks (pkce by default,
// state whenever a redirect proxy is set, none alone), an ID-token flag
// for OIDC, a positive e-mail MaxAge and a parseable From, a WebAuthn
// origin under its RP id.
func FuzzValidate(f *testing.F) {
	f.Add(uint8(0), "github", "GitHub", "cid", "https://github.com/login/oauth/authorize", "https://github.com/login/oauth/access_token", "https://api.github.com/user", "", int64(0), "")
	f.Add(uint8(1), "a.b_c~d-e", "X", "cid", "https://example.com/.well-known/openid-configuration", "", "http://proxy.example", "pkce,state,pkce", int64(0), "")
	f.Add(uint8(2), "google", "Google", "cid", "https://accounts.google.com", "", "", "nonce,none", int64(-1), "https://proxy.example/auth")
	f.Add(uint8(2), "..", " ", "", "accounts.google.com", "javascript:alert(1)", "https://", "bogus", int64(5), "")
	f.Add(uint8(3), "email", "Email", "", "Ada <ada@example.com>", "", "", "", int64(1), "")
	f.Add(uint8(3), "email", "Email", "", "not an address", "", "", "", int64(-5), "")
	f.Add(uint8(4), "credentials", "Password", "", "username,password,username", "", "", "", int64(0), "")
	f.Add(uint8(5), "passkey", "Passkey", "", "https://login.example.com", "example.com", "required", "", int64(0), "")
	f.Add(uint8(5), "passkey", "Passkey", "", "https://evil.com/x?y#z", "example.com.", "sometimes", "", int64(0), "")
	f.Add(uint8(0), "p", "P", "client_secret_post", "https://a", "https://b", "https://c", "none", int64(0), "https://proxy")
	f.Fuzz(func(t *testing.T, kind uint8, id, name, clientID, u1, u2, u3, checks string, num int64, proxy string) {
		p := fuzzProvider(kind, id, name, clientID, u1, u2, u3, checks, num)
		valid := provider.Passkey()
		before := fuzzProvider(kind, id, name, clientID, u1, u2, u3, checks, num)
		for _, list := range [][]provider.Provider{{p}, {valid, p}, {p, p}} {
			out, err := provider.Validate(list, provider.WithRedirectProxyURL(proxy))
			if !reflect.DeepEqual(dropFuncs(p), dropFuncs(before)) {
				t.Fatalf("Validate changed its input:\n got %#v\nwant %#v", p, before)
			}
			if again, err2 := provider.Validate(list, provider.WithRedirectProxyURL(proxy)); errString(err) != errString(err2) || len(again) != len(out) {
				t.Fatalf("Validate is not deterministic: %v, then %v", err, err2)
			}
			if err != nil {
				var ve *provider.ValidationError
				if !errors.Is(err, core.ErrInvalidConfig) || !errors.As(err, &ve) || len(ve.Problems) == 0 {
					t.Fatalf("Validate: %v (%T), want a *ValidationError with problems", err, err)
				}
				for _, pr := range ve.Problems {
					if pr.Index < -1 || pr.Index >= len(list) || pr.Field == "" || pr.Message == "" {
						t.Fatalf("problem %+v does not name a provider of the %d and a field", pr, len(list))
					}
				}
				if out != nil {
					t.Fatalf("Validate failed but returned %v", out)
				}
				continue
			}
			if len(list) == 2 && list[0] == list[1] {
				t.Fatalf("Validate accepts the same id %q twice", id)
			}
			if len(out) != len(list) {
				t.Fatalf("Validate returned %d providers for %d", len(out), len(list))
			}
			for i, q := range out {
				if q == list[i] {
					t.Fatalf("Validate returned the caller's provider, not a copy")
				}
				checkInvariants(t, q, proxy)
			}
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// dropFuncs returns a copy of p's struct with its func fields cleared,
// which reflect.DeepEqual cannot compare.
func dropFuncs(p provider.Provider) any {
	v := reflect.ValueOf(p).Elem()
	c := reflect.New(v.Type()).Elem()
	c.Set(v)
	var clear func(reflect.Value)
	clear = func(v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			switch f := v.Field(i); f.Kind() {
			case reflect.Func:
				f.SetZero()
			case reflect.Struct:
				clear(f)
			}
		}
	}
	clear(c)
	return c.Interface()
}

// checkInvariants fails t unless q, which Validate accepted, satisfies what
// Validate documents.
func checkInvariants(t *testing.T, q provider.Provider, proxy string) {
	t.Helper()
	c := q.Common()
	if c.ID == "" || c.ID == "." || c.ID == ".." || strings.ContainsFunc(c.ID, func(r rune) bool {
		return r >= 128 || !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-._~", r))
	}) || url.PathEscape(c.ID) != c.ID {
		t.Fatalf("accepted id %q is not URL-safe", c.ID)
	}
	if strings.TrimSpace(c.Name) == "" {
		t.Fatalf("accepted provider %q has no name", c.ID)
	}
	absolute := func(field, s string) {
		if s == "" {
			return
		}
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Fatalf("accepted %s %q is not an absolute http(s) URL", field, s)
		}
	}
	checksOK := func(cs provider.Checks, redirectProxy string, oidc bool) {
		if len(cs) == 0 {
			t.Fatalf("accepted provider %q has no checks", c.ID)
		}
		for i, ch := range cs {
			ok := ch == provider.CheckNone || ch == provider.CheckState || ch == provider.CheckPKCE || (oidc && ch == provider.CheckNonce)
			if !ok || slices.Contains(cs[:i], ch) {
				t.Fatalf("accepted checks %q: %q is invalid or repeated", cs, ch)
			}
		}
		if cs.Has(provider.CheckNone) && len(cs) > 1 {
			t.Fatalf("accepted checks %q combine none", cs)
		}
		if redirectProxy != "" && !cs.Has(provider.CheckState) {
			t.Fatalf("accepted redirect proxy %q without the state check: %q", redirectProxy, cs)
		}
	}
	switch q := q.(type) {
	case *provider.OAuth2Config[map[string]any]:
		for field, s := range map[string]string{"Authorization.URL": q.Authorization.URL, "Token.URL": q.Token.URL,
			"Userinfo.URL": q.Userinfo.URL, "WellKnown": q.WellKnown, "JWKSEndpoint": q.JWKSEndpoint, "RedirectProxyURL": q.RedirectProxyURL} {
			absolute(field, s)
		}
		if q.ClientID == "" || (q.Authorization.URL == "" && q.WellKnown == "") || q.Client.DefaultMaxAge < 0 {
			t.Fatalf("accepted OAuth provider %+v lacks a client id or an authorization URL", q)
		}
		if proxy != "" && q.RedirectProxyURL == "" {
			t.Fatalf("the configuration's redirect proxy %q did not reach %q", proxy, q.ID)
		}
		checksOK(q.Checks, q.RedirectProxyURL, false)
	case *provider.OIDCConfig[map[string]any]:
		for field, s := range map[string]string{"Issuer": q.Issuer, "WellKnown": q.WellKnown, "RedirectProxyURL": q.RedirectProxyURL} {
			absolute(field, s)
		}
		if q.ClientID == "" || (q.Issuer == "" && q.WellKnown == "") || q.IDToken == nil {
			t.Fatalf("accepted OIDC provider %+v lacks a client id, an issuer or the ID-token flag", q)
		}
		checksOK(q.Checks, q.RedirectProxyURL, true)
	case *provider.EmailConfig:
		if q.MaxAge <= 0 || q.SendVerificationRequest == nil {
			t.Fatalf("accepted e-mail provider has MaxAge %v, sender %v", q.MaxAge, q.SendVerificationRequest != nil)
		}
		if _, err := mail.ParseAddress(q.From); err != nil {
			t.Fatalf("accepted From %q: %v", q.From, err)
		}
	case *provider.CredentialsConfig:
		seen := map[string]bool{}
		for _, fl := range q.Fields {
			if fl.Name == "" || seen[fl.Name] {
				t.Fatalf("accepted credential fields %+v", q.Fields)
			}
			seen[fl.Name] = true
		}
	case *provider.WebAuthnConfig:
		if !q.UserVerification.Valid() {
			t.Fatalf("accepted user verification %q", q.UserVerification)
		}
		if q.RPOrigin != "" {
			u, err := url.Parse(q.RPOrigin)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
				t.Fatalf("accepted RPOrigin %q is not an origin", q.RPOrigin)
			}
			host, id := strings.ToLower(u.Hostname()), strings.ToLower(q.RPID)
			if q.RPID != "" && host != id && !strings.HasSuffix(host, "."+id) {
				t.Fatalf("accepted RPOrigin %q outside RPID %q", q.RPOrigin, q.RPID)
			}
		}
	}
}

// FuzzNormalizeEmail checks the default e-mail normalisation, which binds
// a sign-in link to an address: what it accepts comes back trimmed and
// lowercased (exactly that for an ASCII address; NFC and an IDNA ASCII
// domain otherwise), with exactly one '@' between non-empty parts, no white
// space, control character or comma, at most 254 bytes, and normalising
// it again changes nothing; what it refuses matches ErrInvalidEmail.
func FuzzNormalizeEmail(f *testing.F) {
	for _, s := range []string{"ada@example.com", " Ada@Example.COM\t", "a@b@c", "@x", "x@", "a@b..c", "a b@c", "a,b@c",
		"\u212Aelvin@example.com", "\u0130@example.com", "ada@bücher.example", "jose\u0301@example.com", "a@ｅｘａｍｐｌｅ.com", "a@[127.0.0.1]", strings.Repeat("a", 65) + "@b", "\xff@x", "a@b\u0085", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := provider.NormalizeEmail(s)
		if err != nil {
			if !errors.Is(err, provider.ErrInvalidEmail) || got != "" {
				t.Fatalf("NormalizeEmail(%q) = %q, %v; want an ErrInvalidEmail", s, got, err)
			}
			return
		}
		local, domain, _ := strings.Cut(got, "@")
		switch {
		case isASCII(s) && got != strings.ToLower(strings.TrimSpace(s)):
			t.Fatalf("NormalizeEmail(%q) = %q, not trimmed and lowercased", s, got)
		case !isASCII(domain) || domain != strings.ToLower(domain):
			t.Fatalf("NormalizeEmail(%q) = %q, the domain is not lowercase ASCII", s, got)
		case strings.Count(got, "@") != 1 || local == "" || domain == "":
			t.Fatalf("NormalizeEmail(%q) = %q, not one @ between two parts", s, got)
		case len(got) > 254 || len(local) > 64:
			t.Fatalf("NormalizeEmail(%q) = %q, too long", s, got)
		case strings.ContainsFunc(got, func(r rune) bool {
			return unicode.IsSpace(r) || unicode.IsControl(r) || r == ',' || r == unicode.ReplacementChar
		}):
			t.Fatalf("NormalizeEmail(%q) = %q holds white space, a control character, a comma or invalid UTF-8", s, got)
		case slices.Contains(strings.Split(domain, "."), ""):
			t.Fatalf("NormalizeEmail(%q) = %q has an empty domain label", s, got)
		}
		if again, err := provider.NormalizeEmail(got); err != nil || again != got {
			t.Fatalf("NormalizeEmail(%q) = %q, but NormalizeEmail(%q) = %q, %v", s, got, got, again, err)
		}
	})
}

// FuzzTokenSetJSON feeds token endpoint responses to TokenSet's decoder:
// any bytes give an error or a token set, and a decoded set encodes to JSON
// that decodes to the same set (but for empty lists inside authorization
// details, which come back nil).
func FuzzTokenSetJSON(f *testing.F) {
	for _, s := range []string{
		`{"access_token":"at","token_type":"Bearer","expires_in":3600,"scope":"a b","refresh_token":"rt","id_token":"x.y.z"}`,
		`{"access_token":"at","expires_in":"3600","expires_at":1700000000,"scope":["a","b"],"x":{"y":[1,2.5,null]}}`,
		`{"authorization_details":[{"type":"t","locations":["l"]}],"session_state":"s"}`,
		`{"expires_in":1e400}`, `{"expires_in":-1}`, `{"expires_in":"9223372036854775808"}`, `{"expires_in":1.5}`,
		`{"scope":[1]}`, `null`, `[]`, `{}`, `{"access_token":null}`, `{"a":1}{"b":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var ts provider.TokenSet
		if err := json.Unmarshal(b, &ts); err != nil {
			return
		}
		enc, err := json.Marshal(ts)
		if err != nil {
			t.Fatalf("decoded %q into %#v, which does not encode: %v", b, ts, err)
		}
		var again provider.TokenSet
		if err := json.Unmarshal(enc, &again); err != nil {
			t.Fatalf("decoded %q, encoded as %s, which does not decode: %v", b, enc, err)
		}
		// The JSON form of an authorization details object omits empty
		// lists (the omitempty tags of core.AuthorizationDetail), so they
		// come back nil.
		for i := range ts.AuthorizationDetails {
			d := &ts.AuthorizationDetails[i]
			for _, l := range []*[]string{&d.Locations, &d.Actions, &d.Datatypes, &d.Privileges} {
				if len(*l) == 0 {
					*l = nil
				}
			}
		}
		if !reflect.DeepEqual(again, ts) {
			t.Fatalf("decoded %q as %#v, encoded as %s, decoded again as %#v", b, ts, enc, again)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
