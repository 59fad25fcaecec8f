package totp_test

import (
	"testing"
	"time"

	"github.com/authport/authport/totp"
)

// FuzzMatch: any key, code and time; Match never panics, and what it
// accepts is a code of the right shape that the test's own HOTP gives at
// the step reported, within the window of now.
func FuzzMatch(f *testing.F) {
	f.Add(rfcKey, "287082", int64(59), uint8(6), uint8(1))
	f.Add(rfcKey, "94287082", int64(59), uint8(8), uint8(0))
	f.Add(rfcKey, "882938", int64(57017783*30), uint8(6), uint8(1))
	f.Add([]byte{}, "", int64(0), uint8(6), uint8(1))
	f.Add(rfcKey[:15], "000000", int64(-1), uint8(7), uint8(3))
	f.Add(rfcKey, "２８７０８２", int64(1<<62), uint8(6), uint8(2))
	f.Fuzz(func(t *testing.T, key []byte, code string, unix int64, digits, sk uint8) {
		s := int(sk % (totp.MaxSkew + 1))
		tt, err := totp.New(totp.Options{Digits: 6 + int(digits%3), Skew: &s})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Unix(unix, 0)
		step, ok := tt.Match(key, code, now)
		if !ok {
			if step != 0 {
				t.Fatalf("refused with step %d", step)
			}
			return
		}
		current := unix / 30
		if unix < 0 && unix%30 != 0 {
			current--
		}
		if len(key) < totp.MinKeySize || len(code) != tt.Digits() || step < 0 || step < current-int64(s) || step > current+int64(s) {
			t.Fatalf("accepted %q (key of %d bytes) at step %d, now step %d", code, len(key), step, current)
		}
		if want := hotpCode(key, step, tt.Digits()); want != code {
			t.Fatalf("accepted %q at step %d, whose code is %s", code, step, want)
		}
	})
}
