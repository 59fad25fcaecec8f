package password

import (
	"context"
	"encoding/hex"
	"errors"
	"regexp"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzVerifyPHC parses any hash string: it never panics, refuses what it
// cannot read with ErrUnknownHash, and what it accepts is within bounds and
// written back exactly as given (the parse is canonical). Hashes cheap
// enough are verified too.
func FuzzVerifyPHC(f *testing.F) {
	f.Add("$argon2id$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc", "password")
	f.Add("$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQ$ZVrRXqxlLcWfcXCnMyv0m4Rpvh/bnCi7", "password")
	f.Add("$argon2id$v=19$m=4294967295,t=1,p=1$c29tZXNhbHQ$CTFhFdXPJO1aFaMaO6Mm5c8y7cJHAph8ArZWb2GRPPc", "")
	f.Add("$argon2i$v=19$m=65536,t=2,p=1$c29tZXNhbHQ$wWKIMhR9lyDFvRz9YTZweHKfbftvj+qf+YFY4NeBbtA", "password")
	f.Add("$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW", "x")
	f.Add("", "")
	a, err := NewArgon2id(testParams)
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, hash, password string) {
		p, salt, key, err := parsePHC(hash)
		if err != nil {
			if !errors.Is(err, ErrUnknownHash) {
				t.Fatalf("parsePHC error %v does not match ErrUnknownHash", err)
			}
			return
		}
		if msg := p.check(); msg != "" {
			t.Fatalf("parsePHC accepted parameters out of bounds (%s): %+v", msg, p)
		}
		if got := encodePHC(p, salt, key); got != hash {
			t.Fatalf("parsePHC is not canonical: %q reads back as %q", hash, got)
		}
		if uint64(p.Memory)*uint64(p.Iterations) > 4096 {
			return // valid, but too slow to verify in a fuzz loop
		}
		ok, _, err := a.Verify(ctx, hash, password)
		if err != nil && !errors.Is(err, ErrTooLong) {
			t.Fatalf("Verify of a parsed hash: %v", err)
		}
		_ = ok
	})
}

// FuzzNormalize: Normalize never panics; what it returns is valid UTF-8
// without control characters, in NFKC (normalising it again changes
// nothing), and its errors match ErrPolicy.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"password", "e\u0301", "\ufdfa", "\x00", "\xff", "👨\u200d👩\u200d👧", "ｐａｓｓ", "\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Normalize(s)
		if err != nil {
			if !errors.Is(err, ErrPolicy) || !(errors.Is(err, ErrMalformed) || errors.Is(err, ErrTooLong)) {
				t.Fatalf("Normalize error %v matches neither ErrMalformed nor ErrTooLong", err)
			}
			return
		}
		if !utf8.ValidString(n) {
			t.Fatalf("Normalize(%q) = %q, not valid UTF-8", s, n)
		}
		for _, r := range n {
			if unicode.IsControl(r) {
				t.Fatalf("Normalize(%q) = %q holds control character %U", s, n, r)
			}
		}
		if again, err := Normalize(n); len(n) <= MaxBytes && (err != nil || again != n) {
			t.Fatalf("Normalize is not idempotent on %q: %q, %v", n, again, err)
		}
	})
}

// FuzzPolicy: Validate never panics, its errors match ErrPolicy and
// exactly one kind, and what it accepts normalises to 8 to 128 code points.
func FuzzPolicy(f *testing.F) {
	for _, s := range []string{"abcdefg", "abcdefgh", "e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301e\u0301", "\ufb00\ufb00\ufb00\ufb00", "pass\x00word", "passw\xffrd"} {
		f.Add(s)
	}
	ctx := context.Background()
	kinds := []error{ErrTooShort, ErrTooLong, ErrMalformed, ErrRejected}
	f.Fuzz(func(t *testing.T, s string) {
		err := Policy{}.Validate(ctx, s)
		if err != nil {
			if !errors.Is(err, ErrPolicy) {
				t.Fatalf("Validate error %v does not match ErrPolicy", err)
			}
			n := 0
			for _, k := range kinds {
				if errors.Is(err, k) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("Validate error %v matches %d kinds, want 1", err, n)
			}
			return
		}
		n, err := Normalize(s)
		if err != nil {
			t.Fatalf("Validate accepted %q, which Normalize refuses: %v", s, err)
		}
		if c := utf8.RuneCountInString(n); c < MinLength || c > MaxLength {
			t.Fatalf("Validate accepted %q of %d code points after NFKC", s, c)
		}
	})
}

var codeShape = regexp.MustCompile(`\A[0-9]{6}\z`)

// FuzzValidCode: ValidCode agrees with the regular expression \A[0-9]{6}\z.
func FuzzValidCode(f *testing.F) {
	for _, s := range []string{"123456", "12345", "1234567", "12345a", "١٢٣٤٥٦", "12345\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidCode(s), codeShape.MatchString(s); got != want {
			t.Fatalf("ValidCode(%q) = %v, want %v", s, got, want)
		}
		if ValidCode(s) && !CodesEqual(s, s) {
			t.Fatalf("CodesEqual(%q, itself) = false", s)
		}
	})
}

var baHashShape = regexp.MustCompile(`\A[0-9a-f]{32}:[0-9a-f]{128}\z`)

// FuzzBetterAuthHash parses any hash string as Better Auth's: the parser
// never panics and agrees with the regular expression
// \A[0-9a-f]{32}:[0-9a-f]{128}\z, the key it returns is the hex after the
// colon, and Verify refuses everything else with ErrUnknownHash without
// computing (its only slot is held, so reaching scrypt would wait for the
// ended context instead).
func FuzzBetterAuthHash(f *testing.F) {
	f.Add("c36357791f2c3c702a0fb5118365c248:b451a5f3aec82720fe6e69ab3b9554dd232ee38662ad91f5988918f3f1d1d4f2d2705fb07121c808dd2e215b76ba36754d1d88b2757ace56ede4c1943154f271")
	f.Add("C36357791F2C3C702A0FB5118365C248:B451A5F3AEC82720FE6E69AB3B9554DD232EE38662AD91F5988918F3F1D1D4F2D2705FB07121C808DD2E215B76BA36754D1D88B2757ACE56EDE4C1943154F271")
	f.Add("$argon2id$v=19$m=64,t=1,p=1$c29tZXNhbHQ$ZVrRXqxlLcWfcXCnMyv0m4Rpvh/bnCi7")
	f.Add("")
	f.Add(":")
	s, err := NewBetterAuthScrypt(WithMaxConcurrent(1))
	if err != nil {
		f.Fatal(err)
	}
	if _, err := s.slots.acquire(context.Background(), 1); err != nil {
		f.Fatal(err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	v := s.Verifier()
	f.Fuzz(func(t *testing.T, hash string) {
		key, ok := parseBetterAuth(hash)
		if want := baHashShape.MatchString(hash); ok != want || v.Recognizes(hash) != want {
			t.Fatalf("parseBetterAuth(%q) ok = %v, the expression says %v", hash, ok, want)
		}
		_, _, err := s.Verify(ended, hash, "password")
		if !ok {
			if !errors.Is(err, ErrUnknownHash) {
				t.Fatalf("Verify(%q) = %v; want ErrUnknownHash", hash, err)
			}
			return
		}
		if hex.EncodeToString(key[:]) != hash[33:] {
			t.Fatalf("parseBetterAuth(%q) key = %x", hash, key)
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Verify(%q) of a well-formed hash with an ended context = %v; want context.Canceled", hash, err)
		}
	})
}
