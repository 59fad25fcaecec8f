package totp_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"image/png"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/totp"
)

// rfcKey is the SHA-1 key of RFC 6238's Appendix B.
var rfcKey = []byte("12345678901234567890")

// hotpCode is RFC 4226's HOTP, written here from the RFC (not with
// pquerna/otp), to check Match and NewKey independently.
func hotpCode(key []byte, step int64, digits int) string {
	m := hmac.New(sha1.New, key)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(step))
	m.Write(b[:])
	h := m.Sum(nil)
	o := h[len(h)-1] & 0xf
	v := binary.BigEndian.Uint32(h[o:]) & 0x7fffffff
	mod := uint32(1)
	for range digits {
		mod *= 10
	}
	return fmt.Sprintf("%0*d", digits, v%mod)
}

func must(t testing.TB, o totp.Options) *totp.TOTP {
	t.Helper()
	tt, err := totp.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return tt
}

func skew(n int) *int { return &n }

// RFC 6238 Appendix B, the SHA-1 rows: eight digits through Options, and
// the six-digit codes (the same values modulo 10^6) with the defaults.
func TestRFC6238Vectors(t *testing.T) {
	rows := []struct {
		unix int64
		step int64
		code string
	}{
		{59, 0x1, "94287082"},
		{1111111109, 0x23523EC, "07081804"},
		{1111111111, 0x23523ED, "14050471"},
		{1234567890, 0x273EF07, "89005924"},
		{2000000000, 0x3F940AA, "69279037"},
		{20000000000, 0x27BC86AA, "65353130"},
	}
	eight := must(t, totp.Options{Digits: 8, Skew: skew(0)})
	six := must(t, totp.Options{Skew: skew(0)})
	for _, r := range rows {
		now := time.Unix(r.unix, 0).UTC()
		if step, ok := eight.Match(rfcKey, r.code, now); !ok || step != r.step {
			t.Errorf("8 digits at %d: Match(%s) = %d, %v; want step %d", r.unix, r.code, step, ok, r.step)
		}
		if step, ok := six.Match(rfcKey, r.code[2:], now); !ok || step != r.step {
			t.Errorf("6 digits at %d: Match(%s) = %d, %v; want step %d", r.unix, r.code[2:], step, ok, r.step)
		}
		// The other length is refused whatever its digits.
		if _, ok := six.Match(rfcKey, r.code, now); ok {
			t.Errorf("6-digit TOTP accepted the 8-digit code %s", r.code)
		}
		if _, ok := eight.Match(rfcKey, r.code[2:], now); ok {
			t.Errorf("8-digit TOTP accepted the 6-digit code %s", r.code[2:])
		}
		// The independent HOTP agrees with the RFC.
		if got := hotpCode(rfcKey, r.step, 8); got != r.code {
			t.Fatalf("the test's HOTP gives %s at step %d, the RFC %s", got, r.step, r.code)
		}
	}
}

// The window is the current step and Skew steps either side, on step
// boundaries; the step reported is the one whose code was given.
func TestSkew(t *testing.T) {
	tt := must(t, totp.Options{})
	if tt.Skew() != totp.DefaultSkew || tt.Digits() != 6 || tt.Period() != 30*time.Second {
		t.Fatalf("defaults: skew %d, digits %d, period %v", tt.Skew(), tt.Digits(), tt.Period())
	}
	const s = 56666666 // a step; its first second is s*30
	for _, c := range []struct {
		name   string
		offset int64 // seconds after the step's start
		code   int64 // the step whose code is given
		ok     bool
	}{
		{"current, first second", 0, s, true},
		{"current, last second", 29, s, true},
		{"previous", 0, s - 1, true},
		{"next", 29, s + 1, true},
		{"two before", 29, s - 2, false},
		{"two after", 0, s + 2, false},
		{"previous, seen from the next step's first second", 30, s - 1, false},
		{"next, seen from the previous step's last second", -1, s + 1, false},
	} {
		now := time.Unix(s*30+c.offset, 0)
		step, ok := tt.Match(rfcKey, hotpCode(rfcKey, c.code, 6), now)
		if ok != c.ok || (ok && step != c.code) {
			t.Errorf("%s: Match = %d, %v; want %d, %v", c.name, step, ok, c.code, c.ok)
		}
	}
	// Skew 0: only the current step; skew 3: three either side.
	none := must(t, totp.Options{Skew: skew(0)})
	if _, ok := none.Match(rfcKey, hotpCode(rfcKey, s-1, 6), time.Unix(s*30, 0)); ok {
		t.Error("skew 0 accepted the previous step")
	}
	three := must(t, totp.Options{Skew: skew(3)})
	for d := int64(-4); d <= 4; d++ {
		step, ok := three.Match(rfcKey, hotpCode(rfcKey, s+d, 6), time.Unix(s*30+15, 0))
		if want := d >= -3 && d <= 3; ok != want || (ok && step != s+d) {
			t.Errorf("skew 3, step %+d: Match = %d, %v", d, step, ok)
		}
	}
	// A 60-second period counts its own steps.
	minute := must(t, totp.Options{Period: time.Minute})
	if step, ok := minute.Match(rfcKey, hotpCode(rfcKey, 1000, 6), time.Unix(1000*60+59, 0)); !ok || step != 1000 {
		t.Errorf("period 60s: Match = %d, %v; want 1000", step, ok)
	}
}

// Steps 57017782 and 57017784 give the same six-digit code for rfcKey
// (found by search, checked below with the test's own HOTP). Seen from the
// step between, both are in the window: Match reports the later one, and
// the same every time.
func TestCollisionReportsLatestStep(t *testing.T) {
	const early, late = 57017782, 57017784
	code := hotpCode(rfcKey, early, 6)
	if hotpCode(rfcKey, late, 6) != code || hotpCode(rfcKey, early+1, 6) == code {
		t.Fatal("the steps do not collide as the test assumes")
	}
	tt := must(t, totp.Options{})
	for range 3 {
		if step, ok := tt.Match(rfcKey, code, time.Unix((early+1)*30, 0)); !ok || step != late {
			t.Fatalf("Match = %d, %v; want %d", step, ok, late)
		}
	}
	// From the early step's own window only it matches.
	if step, ok := tt.Match(rfcKey, code, time.Unix(early*30, 0)); !ok || step != early {
		t.Errorf("from step %d: Match = %d, %v", early, step, ok)
	}
}

// Codes of the wrong shape, short keys and times before the epoch are
// refused, never a panic.
func TestWrongShape(t *testing.T) {
	tt := must(t, totp.Options{})
	now := time.Unix(59, 0)
	good := "287082"
	if _, ok := tt.Match(rfcKey, good, now); !ok {
		t.Fatal("the good code is refused")
	}
	for _, code := range []string{
		"", "28708", "2870820", " 287082", "287082 ", "28708\n", "-87082", "+87082",
		"28708a", "2870８2", "２８７０８２", "28\x0082", "0x1234", "28 082", "\xff\xfe\xfd\xfc\xfb\xfa",
	} {
		if step, ok := tt.Match(rfcKey, code, now); ok || step != 0 {
			t.Errorf("Match(%q) = %d, %v", code, step, ok)
		}
	}
	for _, key := range [][]byte{nil, {}, rfcKey[:totp.MinKeySize-1]} {
		if _, ok := tt.Match(key, hotpCode(key, 1, 6), now); ok {
			t.Errorf("a %d-byte key was used", len(key))
		}
	}
	// A 16-byte key is enough.
	if _, ok := tt.Match(rfcKey[:16], hotpCode(rfcKey[:16], 1, 6), now); !ok {
		t.Error("a 16-byte key was refused")
	}
	// Before the epoch no step exists; at second 0 the window is steps
	// 0 and 1.
	if _, ok := tt.Match(rfcKey, hotpCode(rfcKey, 0, 6), time.Unix(-31, 0)); ok {
		t.Error("a time before the epoch matched")
	}
	if step, ok := tt.Match(rfcKey, hotpCode(rfcKey, 0, 6), time.Unix(0, 0)); !ok || step != 0 {
		t.Errorf("at the epoch: %d, %v", step, ok)
	}
	// Far times neither panic nor wrap.
	for _, now := range []time.Time{{}, time.Unix(1<<62, 0), time.Unix(-1<<62, 0)} {
		_, _ = tt.Match(rfcKey, good, now)
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []totp.Options{
		{Digits: 5}, {Digits: 9}, {Digits: -6},
		{Period: -time.Second}, {Period: 500 * time.Millisecond}, {Period: 1500 * time.Millisecond}, {Period: 6 * time.Minute},
		{Skew: skew(-1)}, {Skew: skew(totp.MaxSkew + 1)},
		{QRSize: 63}, {QRSize: 1025},
	} {
		if _, err := totp.New(o); !errors.Is(err, core.ErrInvalidConfig) {
			t.Errorf("New(%+v) = %v, want an error matching core.ErrInvalidConfig", o, err)
		}
	}
	for _, o := range []totp.Options{
		{Digits: 6}, {Digits: 7}, {Digits: 8}, {Period: time.Second}, {Period: 5 * time.Minute},
		{Skew: skew(0)}, {Skew: skew(totp.MaxSkew)}, {QRSize: 64}, {QRSize: 1024},
	} {
		if _, err := totp.New(o); err != nil {
			t.Errorf("New(%+v) = %v", o, err)
		}
	}
}

// NewKey's URI, text and QR code, checked without pquerna/otp: the URI
// parses as Google's key URI format, its secret is the key, and the QR
// code is a PNG of the configured size.
func TestNewKey(t *testing.T) {
	for _, o := range []totp.Options{{}, {Digits: 8, Period: time.Minute, QRSize: 200}} {
		tt := must(t, o)
		key, err := tt.NewKey("Example Co", "ada+2fa@example.com")
		if err != nil {
			t.Fatal(err)
		}
		if len(key.Secret) != totp.KeySize {
			t.Errorf("secret of %d bytes", len(key.Secret))
		}
		raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(key.Text)
		if err != nil || !bytes.Equal(raw, key.Secret) {
			t.Errorf("text %q does not decode to the secret: %v", key.Text, err)
		}
		u, err := url.Parse(key.URI)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		if u.Scheme != "otpauth" || u.Host != "totp" || u.Path != "/Example Co:ada+2fa@example.com" {
			t.Errorf("URI %s: scheme %q host %q path %q", key.URI, u.Scheme, u.Host, u.Path)
		}
		if q.Get("secret") != key.Text || q.Get("issuer") != "Example Co" || q.Get("algorithm") != "SHA1" ||
			q.Get("digits") != fmt.Sprint(tt.Digits()) || q.Get("period") != fmt.Sprint(int(tt.Period()/time.Second)) {
			t.Errorf("URI %s: query %v", key.URI, q)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(key.QRCode))
		size := o.QRSize
		if size == 0 {
			size = totp.DefaultQRSize
		}
		if err != nil || cfg.Width != size || cfg.Height != size {
			t.Errorf("QR code: %v, %dx%d; want a %dx%d PNG", err, cfg.Width, cfg.Height, size, size)
		}
		if _, err := png.Decode(bytes.NewReader(key.QRCode)); err != nil {
			t.Errorf("QR code does not decode: %v", err)
		}
		// A code the test computes from the key is accepted now.
		now := time.Now()
		step := now.Unix() / int64(tt.Period()/time.Second)
		if got, ok := tt.Match(key.Secret, hotpCode(key.Secret, step, tt.Digits()), now); !ok || got != step {
			t.Errorf("Match of the new key's code = %d, %v; want %d", got, ok, step)
		}
	}
	tt := must(t, totp.Options{})
	a, _ := tt.NewKey("i", "a")
	b, _ := tt.NewKey("i", "a")
	if bytes.Equal(a.Secret, b.Secret) {
		t.Error("two keys are the same")
	}
	for _, c := range [][2]string{{"", "a"}, {"i", ""}, {"a:b", "c"}, {"i", "a:b"}, {"i", "a\x00"}, {strings.Repeat("i", 257), "a"}} {
		if _, err := tt.NewKey(c[0], c[1]); !errors.Is(err, core.ErrInvalidInput) {
			t.Errorf("NewKey(%q, %q) = %v, want an error matching core.ErrInvalidInput", c[0], c[1], err)
		}
	}
}
