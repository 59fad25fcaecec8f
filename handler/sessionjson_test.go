package handler

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/authport/authport/core/auth"
)

// TestSessionJSONAsEncodingJSON: the session JSON's strings are written
// exactly as encoding/json writes them (MarshalJSON's fast path for plain
// ASCII, json.Marshal otherwise), whatever they hold.
func TestSessionJSONAsEncodingJSON(t *testing.T) {
	exp := time.Date(2026, 11, 25, 14, 0, 0, 123e6, time.UTC)
	for _, v := range []string{"", "Ada Lovelace", "a@example.com", "https://x.example/a.png?b=1&c=2",
		`quote " back \ slash`, "<script>", "tab\tnew\nline\x00\x1f\x7f", "Zoë 東京", "\u2028\u2029", "bad \xff utf-8", "~!@#$%^*()_+{}|:?"} {
		for _, strategy := range []auth.Strategy{auth.StrategyDatabase, auth.StrategyJWT} {
			s := Session{User: SessionUser{Name: &v, Email: &v}, Expires: exp, Strategy: strategy}
			got, err := s.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			q, _ := json.Marshal(v)
			want := `{"user":{"name":` + string(q) + `,"email":` + string(q)
			if strategy == auth.StrategyDatabase {
				want += `,"image":null`
			}
			want += `},"expires":"2026-11-25T14:00:00.123Z"}`
			if string(got) != want {
				t.Errorf("%s %q:\n got %s\nwant %s", strategy, v, got, want)
			}
			if !json.Valid(got) {
				t.Errorf("%q: invalid JSON %s", v, got)
			}
		}
	}
}

// FuzzSessionJSON: for any name, the session JSON holds it as
// encoding/json writes it, and is valid JSON.
func FuzzSessionJSON(f *testing.F) {
	for _, s := range []string{"", "Ada", `"\`, "<>&", "\x00\x7f", "é", "\u2028", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		s := Session{User: SessionUser{Name: &v}, Expires: time.Unix(0, 0), Strategy: auth.StrategyJWT}
		got, _ := s.MarshalJSON()
		q, _ := json.Marshal(v)
		want := `{"user":{"name":` + string(q) + `},"expires":"1970-01-01T00:00:00.000Z"}`
		if string(got) != want || !json.Valid(got) {
			t.Errorf("%q:\n got %s\nwant %s", v, got, want)
		}
	})
}
