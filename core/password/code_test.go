package password

import (
	"testing"
)

func TestNewCode(t *testing.T) {
	const n = 2000
	var seen [CodeLength][10]int
	distinct := map[string]bool{}
	for range n {
		c, err := NewCode()
		if err != nil {
			t.Fatal(err)
		}
		if !ValidCode(c) {
			t.Fatalf("NewCode() = %q, not 6 digits", c)
		}
		distinct[c] = true
		for i := range CodeLength {
			seen[i][c[i]-'0']++
		}
	}
	// Every digit shows up in every position: a code that is not uniform
	// (say, never a leading 0 from a missing %06d) fails this. The chance
	// that a uniform source misses a digit in a position over 2000 draws is
	// below 10^-90.
	for i := range CodeLength {
		for d := range 10 {
			if seen[i][d] == 0 {
				t.Errorf("digit %d never appeared in position %d of %d codes", d, i, n)
			}
		}
	}
	// 2000 draws from a million collide a few times, not hundreds.
	if len(distinct) < n-50 {
		t.Errorf("only %d distinct codes in %d", len(distinct), n)
	}
}

func TestValidCode(t *testing.T) {
	for s, want := range map[string]bool{
		"123456":    true,
		"000000":    true,
		"999999":    true,
		"":          false,
		"12345":     false,
		"1234567":   false,
		"12345a":    false,
		" 12345":    false,
		"12345 ":    false,
		"123-456":   false,
		"-12345":    false,
		"+12345":    false,
		"١٢٣٤٥٦":    false, // Arabic-Indic digits
		"１２３４５６":    false, // fullwidth digits
		"12345\x00": false,
		"12345\xff": false,
	} {
		if got := ValidCode(s); got != want {
			t.Errorf("ValidCode(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestCodesEqual(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"123456", "123456", true},
		{"123456", "123457", false},
		{"123456", "023456", false},
		{"123456", "12345", false},
		{"123456", "1234567", false},
		{"123456", "", false},
	} {
		if got := CodesEqual(c.a, c.b); got != c.want {
			t.Errorf("CodesEqual(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
