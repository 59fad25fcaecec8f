package betterauth

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/authport/authport/core"
)

// FuzzDecodeValues feeds the decoders of what another app may have stored
// (a session value, a verification value, a list) arbitrary bytes: none
// panics, and a session value that decodes survives the rewrites authport
// makes of it (updateSession, the refresh of the user copy) with the fields
// it set and the session still decoding.
func FuzzDecodeValues(f *testing.F) {
	f.Add(`{"session":{"id":"x","token":"t","userId":"u","expiresAt":"2030-01-01T00:00:00.000Z","createdAt":"2026-01-01T00:00:00.000Z"},"user":{"id":"u"}}`, "t")
	f.Add(`{"session":{"userId":"u","expiresAt":"2030-01-01T00:00:00Z","ipAddress":null,"activeOrganizationId":"o"},"user":null}`, "t")
	f.Add(`{"identifier":"a","value":"b","expiresAt":"2030-01-01T00:00:00.000Z"}`, "")
	f.Add(`[{"token":"t","expiresAt":1e300}]`, "t")
	f.Add(`{"session":[]}`, "")
	f.Fuzz(func(t *testing.T, raw, token string) {
		_, _ = decodeVerification(raw)
		var l []listEntry
		_ = json.Unmarshal([]byte(raw), &l)
		_ = ownedBy(raw, token)
		s, err := decodeSession(raw, token)
		if err != nil {
			return
		}
		next := *s
		next.Expires = time.Date(2031, 2, 3, 4, 5, 6, 7e6, time.UTC)
		next.IPAddress = "203.0.113.9"
		if checkSession(core.MethodUpdateSession, &next) != nil {
			return // refused before anything is written
		}
		doc, err := mergeSessionDoc(raw, next, json.RawMessage(`{"id":"u2"}`))
		if err != nil {
			t.Fatalf("mergeSessionDoc of a value that decodes: %v", err)
		}
		got, err := decodeSession(doc, token)
		if err != nil {
			t.Fatalf("the merged value does not decode: %v\n%s", err, doc)
		}
		if !got.Expires.Equal(next.Expires) || got.IPAddress != next.IPAddress || got.UserID != next.UserID {
			t.Fatalf("merged %+v, read back %+v", next, got)
		}
		if _, err := replaceUser(doc, json.RawMessage(`{"id":"u3"}`), true); err != nil {
			t.Fatalf("replaceUser: %v", err)
		}
		_ = core.NormalizeTime(got.CreatedAt)
	})
}
