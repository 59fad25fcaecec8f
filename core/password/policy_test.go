package password

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/authport/authport/core"
)

func TestPolicyValidate(t *testing.T) {
	cases := []struct {
		name     string
		policy   Policy
		password string
		kind     error
	}{
		{"7 characters", Policy{}, "abcdefg", ErrTooShort},
		{"8 characters", Policy{}, "abcdefgh", nil},
		{"empty", Policy{}, "", ErrTooShort},
		{"128 characters", Policy{}, strings.Repeat("x", 128), nil},
		{"129 characters", Policy{}, strings.Repeat("x", 129), ErrTooLong},
		{"spaces count", Policy{}, "a b c d ", nil},
		{"only spaces", Policy{}, "        ", nil},
		// 8 × (e + U+0301 COMBINING ACUTE) is 16 code points typed, 8
		// after NFKC composes each pair to é.
		{"8 composed pairs", Policy{}, strings.Repeat("e\u0301", 8), nil},
		{"7 composed pairs", Policy{}, strings.Repeat("e\u0301", 7), ErrTooShort},
		// 65 pairs are 130 code points typed, 65 after NFKC.
		{"65 composed pairs under 128", Policy{}, strings.Repeat("e\u0301", 65), nil},
		// A combining mark with no precomposed form stays two code points.
		{"q with acute stays 2", Policy{}, strings.Repeat("q\u0301", 4), nil},
		{"q with acute 3 pairs", Policy{}, strings.Repeat("q\u0301", 3) + "q", ErrTooShort},
		// U+FB00 LATIN SMALL LIGATURE FF is one code point typed, "ff"
		// after NFKC: 4 of them are 8 characters.
		{"4 ligatures are 8", Policy{}, strings.Repeat("\ufb00", 4), nil},
		{"65 ligatures are 130", Policy{}, strings.Repeat("\ufb00", 65), ErrTooLong},
		// U+FDFA expands to 18 code points under NFKC.
		{"one ARABIC LIGATURE is 18", Policy{}, "\ufdfa", nil},
		{"8 emoji", Policy{}, strings.Repeat("😀", 8), nil},
		{"7 emoji", Policy{}, strings.Repeat("😀", 7), ErrTooShort},
		// 👨‍👩‍👧 is 5 code points (3 people, 2 ZERO WIDTH JOINERs).
		{"family emoji twice is 10", Policy{}, "👨\u200d👩\u200d👧👨\u200d👩\u200d👧", nil},
		{"Cyrillic and CJK", Policy{}, "пароль密码", nil},
		{"NUL", Policy{}, "password\x00", ErrMalformed},
		{"NUL alone in the middle", Policy{}, "pass\x00word", ErrMalformed},
		{"tab", Policy{}, "pass\tword", ErrMalformed},
		{"newline", Policy{}, "password\n", ErrMalformed},
		{"DEL", Policy{}, "password\x7f", ErrMalformed},
		{"C1 control", Policy{}, "password\u0085", ErrMalformed},
		{"invalid UTF-8", Policy{}, "passw\xffrd", ErrMalformed},
		{"truncated UTF-8", Policy{}, "password\xe2\x82", ErrMalformed},
		{"surrogate half", Policy{}, "password\xed\xa0\x80", ErrMalformed},
		{"4096 bytes", Policy{}, strings.Repeat("a", MaxBytes), ErrTooLong},
		{"4 KiB + 1", Policy{}, strings.Repeat("a", MaxBytes+1), ErrTooLong},
		{"4 KiB + 1 with NUL", Policy{}, strings.Repeat("\x00", MaxBytes+1), ErrTooLong},
		{"min 12: 11", Policy{MinLength: 12}, strings.Repeat("z", 11), ErrTooShort},
		{"min 12: 12", Policy{MinLength: 12}, strings.Repeat("z", 12), nil},
		{"max 64: 65", Policy{MaxLength: 64}, strings.Repeat("z", 65), ErrTooLong},
		{"max 64: 64", Policy{MaxLength: 64}, strings.Repeat("z", 64), nil},
	}
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.policy.Validate(ctx, c.password)
			if c.kind == nil {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrPolicy) || !errors.Is(err, c.kind) {
				t.Fatalf("Validate = %v, want ErrPolicy and %v", err, c.kind)
			}
			for _, other := range []error{ErrTooShort, ErrTooLong, ErrMalformed, ErrRejected} {
				if other != c.kind && errors.Is(err, other) {
					t.Errorf("Validate = %v matches %v too", err, other)
				}
			}
			if len(c.password) >= 3 && strings.Contains(err.Error(), c.password) {
				t.Errorf("the error %q quotes the password", err)
			}
		})
	}
}

func TestPolicyCheckHook(t *testing.T) {
	ctx := context.Background()
	breached := errors.New("found in a breach corpus")
	var seen []string
	p := Policy{Check: func(_ context.Context, pw string) error {
		seen = append(seen, pw)
		if pw == "password" {
			return breached
		}
		return nil
	}}
	err := p.Validate(ctx, "password")
	if !errors.Is(err, ErrRejected) || !errors.Is(err, ErrPolicy) || !errors.Is(err, breached) {
		t.Fatalf("Validate(breached) = %v, want ErrRejected, ErrPolicy and the hook's error", err)
	}
	// The hook sees the normalised password: "ｐａｓｓｗｏｒｄ" in
	// fullwidth letters is "password" after NFKC, and is refused as well.
	if err := p.Validate(ctx, "ｐａｓｓｗｏｒｄ"); !errors.Is(err, breached) {
		t.Errorf("Validate(fullwidth breached) = %v, want the hook's error", err)
	}
	if err := p.Validate(ctx, "correct horse"); err != nil {
		t.Errorf("Validate(accepted by the hook) = %v", err)
	}
	// Not called for a password that fails the length rules.
	if err := p.Validate(ctx, "short"); !errors.Is(err, ErrTooShort) {
		t.Errorf("Validate(short) = %v", err)
	}
	want := []string{"password", "password", "correct horse"}
	if strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Errorf("the hook saw %q, want %q", seen, want)
	}
}

func TestPolicyConfig(t *testing.T) {
	for _, p := range []Policy{{}, {MinLength: 8}, {MinLength: 15, MaxLength: 64}, {MinLength: 128}, {MaxLength: 8}} {
		if err := p.Config(); err != nil {
			t.Errorf("Policy%+v.Config() = %v, want nil", p, err)
		}
	}
	for _, p := range []Policy{{MinLength: 7}, {MinLength: -1}, {MinLength: 129}, {MaxLength: 129}, {MaxLength: 7}, {MaxLength: -1}, {MinLength: 20, MaxLength: 10}} {
		err := p.Config()
		if !errors.Is(err, core.ErrInvalidConfig) {
			t.Errorf("Policy{Min %d, Max %d}.Config() = %v, want core.ErrInvalidConfig", p.MinLength, p.MaxLength, err)
		}
		if verr := p.Validate(context.Background(), "a fine password"); !errors.Is(verr, core.ErrInvalidConfig) || errors.Is(verr, ErrPolicy) {
			t.Errorf("Validate under Policy{Min %d, Max %d} = %v, want core.ErrInvalidConfig and not ErrPolicy", p.MinLength, p.MaxLength, verr)
		}
	}
}

func TestNormalize(t *testing.T) {
	cases := map[string]string{
		"password":                    "password",
		"e\u0301t\u00e9":              "\u00e9t\u00e9",   // composed
		"\u212b":                      "\u00c5",          // ANGSTROM SIGN → Å
		"\ufb01x":                     "fix",             // ligature fi
		"ｐａｓｓ":                        "pass",            // fullwidth
		"x\u00b2":                     "x2",              // superscript two
		"\u2126":                      "\u03a9",          // OHM SIGN → Ω
		"a\u00a0b":                    "a b",             // NO-BREAK SPACE → space
		"👨\u200d👩\u200d👧":             "👨\u200d👩\u200d👧", // ZWJ kept
		"":                            "",
		strings.Repeat("a", MaxBytes): strings.Repeat("a", MaxBytes),
	}
	for in, want := range cases {
		got, err := Normalize(in)
		if err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	// Typed either way, one password: the same hash verifies both.
	a := newTestHasher(t, testParams)
	ctx := context.Background()
	n1, _ := Normalize("caf\u00e9 cr\u00e8me")
	n2, _ := Normalize("cafe\u0301 cre\u0300me")
	h, err := a.Hash(ctx, n1)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, err := a.Verify(ctx, h, n2); !ok || err != nil {
		t.Errorf("Verify(decomposed spelling) = %v, %v; want true", ok, err)
	}
	for in, kind := range map[string]error{
		"a\x00b":                              ErrMalformed,
		"\xc0\x80":                            ErrMalformed, // overlong NUL
		"\x1b[31m":                            ErrMalformed,
		strings.Repeat("é", MaxBytes/2) + "a": ErrTooLong, // 4097 bytes
	} {
		if _, err := Normalize(in); !errors.Is(err, kind) || !errors.Is(err, ErrPolicy) {
			t.Errorf("Normalize(%.20q) err = %v, want %v", in, err, kind)
		}
	}
}
