package auth

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/authport/authport/core"
)

// These tests cover the parts of second factors that need no store:
// sealing and its rotation, the pending and enrolment tokens, the session
// token's authentication suffix, amr, and StepUp.

var testSecrets = []string{"new-0123456789abcdefghijklmnopqrstu", "old-0123456789abcdefghijklmnopqrstu"}

func testAuth(t testing.TB, secrets []string, now time.Time) *Auth {
	t.Helper()
	s, err := newSealers(secrets)
	if err != nil {
		t.Fatal(err)
	}
	return &Auth{secrets: secrets, seal: s, now: func() time.Time { return now }, sf: SecondFactorOptions{Enabled: true, PendingMaxAge: DefaultPendingMaxAge}}
}

func TestSealRotation(t *testing.T) {
	old, err := newSealer(testSecrets[1:], sealTOTPKey)
	if err != nil {
		t.Fatal(err)
	}
	both, _ := newSealer(testSecrets, sealTOTPKey)
	onlyNew, _ := newSealer(testSecrets[:1], sealTOTPKey)
	other, _ := newSealer(testSecrets, sealPending)
	aad := []byte("factor\x00user")
	sealed, err := old.seal([]byte("key"), aad)
	if err != nil {
		t.Fatal(err)
	}
	if p, current, err := both.open(sealed, aad); err != nil || current || string(p) != "key" {
		t.Errorf("an old secret's value with [new, old]: %q %v %v; want it opened, not current", p, current, err)
	}
	if _, _, err := onlyNew.open(sealed, aad); err == nil {
		t.Errorf("opened with a secret that did not seal it")
	}
	if _, _, err := both.open(sealed, []byte("factor\x00other")); err == nil {
		t.Errorf("opened with another record's associated data")
	}
	if _, _, err := other.open(sealed, aad); err == nil {
		t.Errorf("opened with another purpose's key")
	}
	fresh, _ := both.seal([]byte("key"), aad)
	if _, current, err := both.open(fresh, aad); err != nil || !current {
		t.Errorf("a value sealed with [new, old]: current %v, %v", current, err)
	}
	for _, bad := range [][]byte{nil, fresh[:sealOverhead-1], append(slices.Clone(fresh[:len(fresh)-1]), fresh[len(fresh)-1]^1)} {
		if _, _, err := both.open(bad, aad); err == nil {
			t.Errorf("opened a truncated or altered value %x", bad)
		}
	}
}

func TestPendingTokenRoundTripAndExpiry(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	// A user id long enough not to turn up by chance in the token's
	// random base64 ("u1" did, in about one token in 35).
	const pendingUser = "user-8f3a61c2-not-in-the-token"
	a := testAuth(t, testSecrets, now)
	pc := pendingClaims{ID: "id", UserID: pendingUser, ProviderID: "password", Methods: []string{AMRPassword}, Expires: now.Add(time.Minute).Unix()}
	tok, err := a.sealPending(pc)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tok, pendingUser) || strings.ContainsAny(tok, "=+/;, ") {
		t.Errorf("token %q reveals its user or is not cookie-safe", tok)
	}
	got, err := a.openPending(tok)
	if err != nil || got.UserID != pendingUser || !slices.Equal(got.Methods, pc.Methods) {
		t.Fatalf("openPending: %+v, %v", got, err)
	}
	// Rotation: a token of the old secret opens while it is configured.
	rotated := testAuth(t, append([]string{"newer-0123456789abcdefghijklmnopq"}, testSecrets...), now)
	if _, err := rotated.openPending(tok); err != nil {
		t.Errorf("after rotation: %v", err)
	}
	if _, err := testAuth(t, []string{"newer-0123456789abcdefghijklmnopq"}, now).openPending(tok); CodeOf(err) != CodeSecondFactor {
		t.Errorf("with its secret removed: %v", err)
	}
	late := testAuth(t, testSecrets, now.Add(time.Minute))
	if _, err := late.openPending(tok); CodeOf(err) != CodeSecondFactor {
		t.Errorf("expired: %v", err)
	}
	// An enrolment token is not a pending token, nor the reverse.
	enr, _ := a.sealEnrollment(enrollmentClaims{FactorID: "f", UserID: pendingUser, Key: []byte("k"), Expires: pc.Expires})
	if _, err := a.openPending(enr); err == nil {
		t.Errorf("an enrolment token opened as a pending sign-in")
	}
	if _, err := a.openEnrollment(tok); err == nil {
		t.Errorf("a pending token opened as an enrolment")
	}
}

func TestPendingTokenDropsProviderTokensToFitACookie(t *testing.T) {
	now := time.Now()
	a := testAuth(t, testSecrets, now)
	big := strings.Repeat("x", 4000)
	acc := core.Account{Provider: "github", ProviderAccountID: "gh-1", UserID: "u", IDToken: &big}
	tok, err := a.sealPending(pendingClaims{ID: "id", UserID: "u", Expires: now.Add(time.Minute).Unix(), Account: &acc})
	if err != nil || len(tok) > maxPendingToken {
		t.Fatalf("token of %d bytes, %v", len(tok), err)
	}
	got, err := a.openPending(tok)
	if err != nil || got.Account == nil || got.Account.ProviderAccountID != "gh-1" || got.Account.IDToken != nil {
		t.Errorf("account %+v, %v; want its key without the tokens", got.Account, err)
	}
}

func TestSessionTokenAuthentication(t *testing.T) {
	at := time.Unix(1893456000, 0).UTC()
	au := authenticationAt(at, combine([]string{AMRPassword}, []string{AMROneTimePassword}))
	random := strings.Repeat("ab", 32)
	tok := sessionTokenWith(random, au)
	if tok != random+"_1893456000_mfa-otp-pwd" {
		t.Errorf("token %q", tok)
	}
	if got := tokenAuthentication(tok); !got.Time.Equal(at) || !slices.Equal(got.Methods, au.Methods) || got.Level != LevelMultiFactor {
		t.Errorf("read %+v, want %+v", got, au)
	}
	for _, bad := range []string{random, "", random + "_", random + "_x_pwd", random + "_-5_pwd", random + "_1_PWD", random + "_1_pwd--otp",
		random[:63] + "_1_pwd", random + "_1_" + strings.Repeat("a-", 9) + "a", random + "_99999999999999999999_pwd"} {
		if got := tokenAuthentication(bad); !got.Time.IsZero() || got.Methods != nil {
			t.Errorf("tokenAuthentication(%q) = %+v, want zero", bad, got)
		}
	}
	if got := tokenAuthentication(random + "_1893456000_"); !got.Time.Equal(at) || got.Methods != nil || got.Level != "" {
		t.Errorf("no methods: %+v", got)
	}
}

func TestClaimsAuthenticationFromJSON(t *testing.T) {
	claims := map[string]any{}
	setAuthClaims(claims, authenticationAt(time.Unix(1893456000, 0), []string{AMRFederated}))
	b, _ := json.Marshal(claims)
	var decoded map[string]any
	json.Unmarshal(b, &decoded)
	for _, c := range []map[string]any{claims, decoded} {
		got := claimsAuthentication(c)
		if got.Time.Unix() != 1893456000 || !slices.Equal(got.Methods, []string{"fed"}) || got.Level != LevelSingleFactor {
			t.Errorf("claimsAuthentication(%v) = %+v", c, got)
		}
	}
	if got := claimsAuthentication(map[string]any{"amr": []any{"pwd"}}); !got.Time.IsZero() {
		t.Errorf("without auth_time: %+v", got)
	}
}

func TestCombineAndLevel(t *testing.T) {
	for _, c := range []struct {
		first, second, want []string
	}{
		{[]string{"pwd"}, nil, []string{"pwd"}},
		{[]string{"pwd"}, []string{"otp"}, []string{"mfa", "otp", "pwd"}},
		{[]string{"fed"}, []string{"hwk", "user"}, []string{"fed", "hwk", "mfa", "user"}},
		{nil, []string{"otp"}, []string{"otp"}},
		{[]string{"hwk", "user", "mfa"}, nil, []string{"hwk", "mfa", "user"}},
	} {
		if got := combine(c.first, c.second); !slices.Equal(got, c.want) {
			t.Errorf("combine(%v, %v) = %v, want %v", c.first, c.second, got, c.want)
		}
	}
}

func TestStepUpSatisfied(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	mfa := authenticationAt(now.Add(-time.Minute), []string{"mfa", "otp", "pwd"})
	one := authenticationAt(now.Add(-time.Minute), []string{"pwd"})
	old := authenticationAt(now.Add(-time.Hour), []string{"mfa", "otp", "pwd"})
	for _, c := range []struct {
		name string
		s    StepUp
		au   Authentication
		want bool
	}{
		{"nothing required", StepUp{}, Authentication{}, true},
		{"fresh", StepUp{MaxAge: 5 * time.Minute}, one, true},
		{"too old", StepUp{MaxAge: 5 * time.Minute}, old, false},
		{"unknown time", StepUp{MaxAge: 5 * time.Minute}, Authentication{Methods: []string{"pwd"}}, false},
		{"far future", StepUp{MaxAge: 5 * time.Minute}, authenticationAt(now.Add(time.Hour), []string{"pwd"}), false},
		{"method present", StepUp{Methods: []string{"hwk", "otp"}}, mfa, true},
		{"method missing", StepUp{Methods: []string{"otp"}}, one, false},
		{"mfa level", StepUp{Level: LevelMultiFactor}, mfa, true},
		{"mfa level of one factor", StepUp{Level: LevelMultiFactor}, one, false},
		{"1fa level met by mfa", StepUp{Level: LevelSingleFactor}, mfa, true},
		{"1fa level of unknown", StepUp{Level: LevelSingleFactor}, Authentication{}, false},
		{"all", StepUp{MaxAge: 5 * time.Minute, Methods: []string{"otp"}, Level: LevelMultiFactor}, mfa, true},
	} {
		if got := c.s.Satisfied(c.au, now); got != c.want {
			t.Errorf("%s: Satisfied = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRecoveryCodeShape(t *testing.T) {
	c, err := newRecoveryCode()
	if err != nil {
		t.Fatal(err)
	}
	if len(c) != 11 || c[5] != '-' {
		t.Errorf("code %q, want xxxxx-xxxxx", c)
	}
	norm, ok := normalizeRecoveryCode(" " + strings.ToUpper(c) + " ")
	if !ok || norm != strings.ReplaceAll(c, "-", "") {
		t.Errorf("normalize(%q) = %q %v", c, norm, ok)
	}
	if n, ok := normalizeRecoveryCode("OIL23-45678"); !ok || n != "01123"+"45678" {
		t.Errorf("look-alikes: %q %v", n, ok)
	}
	for _, bad := range []string{"", "abc", "abcde-fghju", "abcde-fghjk0", strings.Repeat("a", 40)} {
		if _, ok := normalizeRecoveryCode(bad); ok {
			t.Errorf("normalize(%q) accepted", bad)
		}
	}
}

// FuzzSecondFactorTokens: no input makes the pending-token, enrolment-token,
// session-token or recovery-code parsers panic, and no input but a token
// sealed by the library opens.
func FuzzSecondFactorTokens(f *testing.F) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a := testAuth(f, testSecrets, now)
	pending, _ := a.sealPending(pendingClaims{ID: "id", UserID: "u", Expires: now.Add(time.Minute).Unix()})
	enr, _ := a.sealEnrollment(enrollmentClaims{FactorID: "f", UserID: "u", Key: []byte("k"), Expires: now.Add(time.Minute).Unix()})
	for _, s := range []string{pending, enr, "", "x", strings.Repeat("ab", 32) + "_1_pwd", "abcde-fghjk"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Only what the library sealed opens (a seed, or a spelling of
		// it that decodes to the same bytes); the fuzzing workers seal
		// their own seeds, so the claims are compared, not the text.
		if pc, err := a.openPending(s); err == nil && (pc.ID != "id" || pc.UserID != "u") {
			t.Errorf("opened a pending token the library did not make: %q → %+v", s, pc)
		}
		if e, err := a.openEnrollment(s); err == nil && (e.FactorID != "f" || e.UserID != "u") {
			t.Errorf("opened an enrolment token the library did not make: %q → %+v", s, e)
		}
		au := tokenAuthentication(s)
		if !au.Time.IsZero() && !strings.HasPrefix(s[tokenHexChars:], tokenAuthSep) {
			t.Errorf("tokenAuthentication(%q) = %+v", s, au)
		}
		normalizeRecoveryCode(s)
	})
}

// TestTOTPAccountOfAPendingEnrolment: the account an authenticator app
// shows for a key enrolled through a pending sign-in names nothing the
// first factor did not: never the address after a sign-in that may have
// named the username.
func TestTOTPAccountOfAPendingEnrolment(t *testing.T) {
	name := "Ada Lovelace"
	withUsername := core.User{ID: "u1", Email: "ada@example.com", Username: "ada", Name: &name}
	addressOnly := core.User{ID: "u2", Email: "ada@example.com", Name: &name}
	for _, c := range []struct {
		user    core.User
		methods []string
		pending bool
		want    string
	}{
		{withUsername, nil, false, "ada@example.com"},
		{addressOnly, nil, false, "ada@example.com"},
		{core.User{ID: "u3", Name: &name}, nil, false, name},
		{withUsername, []string{AMRPassword}, true, "ada"},
		{withUsername, []string{AMREmail}, true, "ada"},
		{addressOnly, []string{AMRPassword}, true, "ada@example.com"},
		{addressOnly, []string{AMREmail}, true, "ada@example.com"},
		{addressOnly, []string{AMRFederated}, true, "ada@example.com"},
		{addressOnly, []string{AMRHardwareKey}, true, "u2"},
		{addressOnly, nil, true, "u2"},
	} {
		var pc *pendingClaims
		if c.pending {
			pc = &pendingClaims{ID: "p", UserID: c.user.ID, Methods: c.methods, Enroll: true}
		}
		if got := totpAccount(c.user, pc); got != c.want {
			t.Errorf("totpAccount(%+v, pending %v %v) = %q, want %q", c.user, c.pending, c.methods, got, c.want)
		}
	}
}

// TestTOTPLabel: any account becomes a label an otpauth:// URI can carry
// (the totp module refuses a colon, NUL, or more than 256 bytes).
func TestTOTPLabel(t *testing.T) {
	long := strings.Repeat("é", 200) // 400 bytes
	for in, want := range map[string]string{
		"ada@example.com": "ada@example.com",
		"Dr: Who":         "Dr  Who",
		"a\x00b":          "ab",
		"bad\xffutf8":     "badutf8",
		":":               "user",
		"":                "user",
		long:              strings.Repeat("é", 128),
	} {
		got := totpLabel(in)
		if got != want {
			t.Errorf("totpLabel(%q) = %q, want %q", in, got, want)
		}
		if strings.ContainsAny(got, ":\x00") || len(got) > 256 || !utf8.ValidString(got) {
			t.Errorf("totpLabel(%q) = %q does not fit a label", in, got)
		}
	}
}
