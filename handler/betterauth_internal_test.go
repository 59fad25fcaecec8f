package handler

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// jsStringify(parseJS(x)) is what JavaScript's JSON.stringify(JSON.parse(x))
// prints; the expected strings are Node 20's.
func TestBetterAuthJSONAsJavaScript(t *testing.T) {
	for in, want := range map[string]string{
		`{"b":1,"2":2,"a":3,"1":4,"b":5,"4294967295":6,"4294967294":7,"01":8}`: `{"1":4,"2":2,"4294967294":7,"b":5,"a":3,"4294967295":6,"01":8}`,
		`[1e400,-1e400]`:                     `[null,null]`,
		` {"x" : [ true , false , null ] } `: `{"x":[true,false,null]}`,
		`"\u003c\u2028\u0001\/\t"`:           "\"<\u2028\\u0001/\\t\"",
		`"2025-01-02T03:04:05Z"`:             `"2025-01-02T03:04:05.000Z"`,
		`"2025-01-02T03:04:05.123456Z"`:      `"2025-01-02T03:04:05.123Z"`,
		`"2025-13-02T03:04:05Z"`:             `"2025-13-02T03:04:05Z"`,
		`"2025-01-02T03:04:05+01:00"`:        `"2025-01-02T03:04:05+01:00"`,
	} {
		v, err := parseJS([]byte(in))
		if err != nil {
			t.Errorf("parseJS(%s): %v", in, err)
			continue
		}
		if got := string(jsStringify(nil, v)); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
	for _, bad := range []string{``, `{`, `{"a":1}x`, `{"a":1}{}`, `[1,]`, `{a:1}`, `NaN`} {
		if _, err := parseJS([]byte(bad)); err == nil {
			t.Errorf("parseJS(%q) accepted", bad)
		}
	}
	for f, want := range map[float64]string{
		0: "0", math.Copysign(0, -1): "0", 1: "1", -1: "-1", 0.1: "0.1", 1e21: "1e+21", 1e20: "100000000000000000000",
		123456789012345680000: "123456789012345680000", 1.5e-7: "1.5e-7", 1e-7: "1e-7", 0.000001: "0.000001",
		0.0000012345: "0.0000012345", 5e-324: "5e-324", math.MaxFloat64: "1.7976931348623157e+308",
		1795920058397: "1795920058397", -2.5e-10: "-2.5e-10", 100: "100", 1e100: "1e+100",
		0.8999999999999999: "0.8999999999999999", 1 << 53: "9007199254740992", 1<<53 + 2: "9007199254740994",
		math.Inf(1): "null",
	} {
		if got := string(appendJSNumber(nil, f)); got != want {
			t.Errorf("%v: got %s, want %s", f, got, want)
		}
	}
}

// The session cookie's value is the one Better Auth 1.7.25 set for this
// secret and token (setSignedCookie), and it verifies back to the token.
func TestBetterAuthSignedCookieValue(t *testing.T) {
	ba := &betterAuth{secrets: [][]byte{[]byte("0123456789abcdef0123456789abcdef-better")}}
	const token, want = "yT3Lm2z5qB3FkEMLomhPTqpYF9UyqAre", "yT3Lm2z5qB3FkEMLomhPTqpYF9UyqAre.8FjbWEGK1ZjWtug9O6PQEnXBZHjOUhiDUQ4bjZyc4aY%3D"
	if got := ba.sign(token); got != want {
		t.Errorf("sign: %s, want %s", got, want)
	}
	if got := ba.verify(want); got != token {
		t.Errorf("verify: %q, want the token", got)
	}
	for _, bad := range []string{"", ".", token, want[:len(want)-3], "." + want[len(token)+1:], want + "x", "x" + want} {
		if got := ba.verify(bad); got != "" {
			t.Errorf("verify(%q) = %q", bad, got)
		}
	}
}

// FuzzBetterAuthJSON checks the compact strategy's JSON canonicalization:
// parseJS takes what encoding/json takes (short of its depth limit) and
// nothing else, and its JSON.stringify output parses back to itself.
func FuzzBetterAuthJSON(f *testing.F) {
	for _, s := range []string{`{"b":1,"2":2,"a":[1e400,"x"]}`, `"2025-01-02T03:04:05Z"`, `{"a":{"a":{"a":null}}}`, `[]`, `"\ud800"`, "\"\xff\"", `-0.0e-0`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseJS(data)
		if valid := json.Valid(data); (err == nil) != valid && (err == nil || err.Error() != "nested too deep") {
			t.Fatalf("parseJS(%q): %v, but json.Valid is %v", data, err, valid)
		}
		if err != nil {
			return
		}
		once := jsStringify(nil, v)
		again, err := parseJS(once)
		if err != nil {
			t.Fatalf("parseJS(%q) of its own output: %v", once, err)
		}
		if twice := jsStringify(nil, again); !bytes.Equal(once, twice) {
			t.Fatalf("not stable: %q then %q", once, twice)
		}
	})
}
