package betterauth

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// isoLayout is JavaScript's Date.prototype.toISOString for years 0 to
// 9999, which is how JSON.stringify writes Better Auth's dates.
const isoLayout = "2006-01-02T15:04:05.000Z"

func isoTime(t time.Time) string { return t.UTC().Format(isoLayout) }

// checkISO refuses a time outside the years toISOString writes in four
// digits.
func checkISO(m core.Method, field string, t time.Time) error {
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return shared.Invalid(m, field, fmt.Sprintf("year %d is outside 0-9999, which Better Auth's ISO 8601 dates cannot hold", y))
	}
	return nil
}

// parseISO reads a date as JSON.stringify wrote it (any RFC 3339 form is
// taken) and normalizes it.
func parseISO(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %q is not an ISO 8601 date", shared.ErrCorrupt, s)
	}
	return core.NormalizeTime(t), nil
}

// idAlphabet is the alphabet of Better Auth's generateId.
const idAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// newID returns 32 random characters of idAlphabet, the form of the ids
// Better Auth gives the sessions it keeps in secondary storage only.
func newID() string {
	var b [32]byte
	out := make([]byte, 0, 32)
	for len(out) < 32 {
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		for _, c := range b {
			if c < 248 && len(out) < 32 { // 248 = 4*62: unbiased
				out = append(out, idAlphabet[int(c)%len(idAlphabet)])
			}
		}
	}
	return string(out)
}

// sessionJSON is the session half of Better Auth's session value, its
// fields in the order Better Auth writes them. A zero CreatedAt or
// UpdatedAt is written as the epoch (unknownTime).
type sessionJSON struct {
	ID        string `json:"id"`
	IPAddress string `json:"ipAddress"`
	UserAgent string `json:"userAgent"`
	ExpiresAt string `json:"expiresAt"`
	UserID    string `json:"userId"`
	Token     string `json:"token"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
}

// checkSession refuses a session the layout cannot store.
func checkSession(m core.Method, s *core.Session) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if err := checkToken(m, s.SessionToken); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"userId", s.UserID}, {"ipAddress", s.IPAddress}, {"userAgent", s.UserAgent}} {
		if !utf8.ValidString(f.v) {
			return shared.Invalid(m, f.name, "is not valid UTF-8, which Better Auth's JSON values cannot hold")
		}
	}
	for _, f := range []struct {
		name string
		t    time.Time
	}{{"expires", s.Expires}, {"createdAt", s.CreatedAt}, {"updatedAt", s.UpdatedAt}} {
		if f.name != "expires" && f.t.IsZero() {
			continue
		}
		if f.name != "expires" && f.t.Equal(unknownTime) {
			return shared.Invalid(m, f.name, "is the Unix epoch, which the layout writes for an unknown time (leave it zero)")
		}
		if err := checkISO(m, f.name, f.t); err != nil {
			return err
		}
	}
	return nil
}

// unknownTime is how the layout writes a session's createdAt or updatedAt
// that is unknown (zero): the Unix epoch. Better Auth needs a date there
// (its updateSession writes new Date(createdAt) back, and JSON.stringify
// throws on an invalid one); authport reads the epoch back as unknown.
// authport's library always sets both.
var unknownTime = time.Unix(0, 0).UTC()

// metaISO formats a createdAt or updatedAt, the epoch for the zero time.
func metaISO(t time.Time) string {
	if t.IsZero() {
		return isoTime(unknownTime)
	}
	return isoTime(t)
}

// newSessionDoc encodes a new session with its user's copy.
func newSessionDoc(s core.Session, user json.RawMessage) (string, error) {
	doc := struct {
		Session sessionJSON     `json:"session"`
		User    json.RawMessage `json:"user"`
	}{sessionJSON{
		ID: newID(), IPAddress: s.IPAddress, UserAgent: s.UserAgent, ExpiresAt: isoTime(s.Expires),
		UserID: s.UserID, Token: s.SessionToken, CreatedAt: metaISO(s.CreatedAt), UpdatedAt: metaISO(s.UpdatedAt),
	}, user}
	b, err := json.Marshal(doc)
	return string(b), err
}

// mergeSessionDoc returns the stored value raw with the session's fields
// set to s (the fields authport does not know, Better Auth's id and a
// plugin's, kept) and, when user is not nil, the user copy replaced.
func mergeSessionDoc(raw string, s core.Session, user json.RawMessage) (string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &top); err != nil {
		return "", fmt.Errorf("%w: session value: %v", shared.ErrCorrupt, err)
	}
	var sess map[string]json.RawMessage
	if err := json.Unmarshal(top["session"], &sess); err != nil || sess == nil {
		return "", fmt.Errorf("%w: session value has no session object", shared.ErrCorrupt)
	}
	set := func(k string, v any) {
		b, _ := json.Marshal(v)
		sess[k] = b
	}
	set("token", s.SessionToken)
	set("userId", s.UserID)
	set("expiresAt", isoTime(s.Expires))
	set("ipAddress", s.IPAddress)
	set("userAgent", s.UserAgent)
	set("createdAt", metaISO(s.CreatedAt))
	set("updatedAt", metaISO(s.UpdatedAt))
	if _, ok := sess["id"]; !ok {
		set("id", newID())
	}
	b, err := json.Marshal(sess)
	if err != nil {
		return "", err
	}
	top["session"] = b
	if user != nil {
		top["user"] = user
	}
	out, err := json.Marshal(top)
	return string(out), err
}

// replaceUser returns the stored value raw with its user copy replaced
// by user, whose createdAt gives way to the old copy's (authport's users
// have none of their own: see userCopy).
func replaceUser(raw string, user json.RawMessage, keepCreated bool) (string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &top); err != nil {
		return "", fmt.Errorf("%w: session value: %v", shared.ErrCorrupt, err)
	}
	var old, next map[string]json.RawMessage
	if keepCreated && json.Unmarshal(top["user"], &old) == nil && old["createdAt"] != nil && json.Unmarshal(user, &next) == nil {
		next["createdAt"] = old["createdAt"]
		if b, err := json.Marshal(next); err == nil {
			user = b
		}
	}
	top["user"] = user
	out, err := json.Marshal(top)
	return string(out), err
}

// decodeSession reads a session value stored under token. It returns the
// session and the id of its user.
func decodeSession(raw, token string) (*core.Session, error) {
	var doc struct {
		Session *struct {
			Token     *string `json:"token"`
			UserID    *string `json:"userId"`
			ExpiresAt *string `json:"expiresAt"`
			CreatedAt *string `json:"createdAt"`
			UpdatedAt *string `json:"updatedAt"`
			IPAddress *string `json:"ipAddress"`
			UserAgent *string `json:"userAgent"`
		} `json:"session"`
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		return nil, fmt.Errorf("%w: session value: %v", shared.ErrCorrupt, err)
	}
	j := doc.Session
	if j == nil || j.UserID == nil || *j.UserID == "" || j.ExpiresAt == nil {
		return nil, fmt.Errorf("%w: session value without session.userId or session.expiresAt", shared.ErrCorrupt)
	}
	if j.Token != nil && *j.Token != token {
		return nil, fmt.Errorf("%w: session value under one token names another", shared.ErrCorrupt)
	}
	s := &core.Session{SessionToken: token, UserID: *j.UserID}
	var err error
	if s.Expires, err = parseISO(*j.ExpiresAt); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		v  *string
		to *time.Time
	}{{j.CreatedAt, &s.CreatedAt}, {j.UpdatedAt, &s.UpdatedAt}} {
		if f.v == nil {
			continue
		}
		if *f.to, err = parseISO(*f.v); err != nil {
			return nil, err
		}
		if f.to.Equal(unknownTime) {
			*f.to = time.Time{}
		}
	}
	if j.IPAddress != nil {
		s.IPAddress = *j.IPAddress
	}
	if j.UserAgent != nil {
		s.UserAgent = *j.UserAgent
	}
	return s, nil
}

// userCopy encodes the copy of u that Better Auth keeps with each session
// (its user model): id, name ("" for none: Better Auth's name is not
// nullable), email, emailVerified (a boolean: whether u has a time),
// image, createdAt and updatedAt, username when u has one, and the
// application's fields ([core.User.Data]) beside them. authport's users
// carry no createdAt or updatedAt: a Data field of that name is used, else
// the time of the write.
func userCopy(u core.User, now time.Time) (json.RawMessage, error) {
	m := make(map[string]any, len(u.Data)+8)
	for k, v := range u.Data {
		m[k] = v
	}
	name := ""
	if u.Name != nil {
		name = *u.Name
	}
	m["id"], m["name"], m["email"], m["emailVerified"], m["image"] = u.ID, name, u.Email, u.EmailVerified != nil, u.Image
	if u.Username != "" {
		m["username"] = u.Username
	}
	for _, k := range []string{"createdAt", "updatedAt"} {
		if _, ok := u.Data[k]; !ok {
			m[k] = isoTime(now)
		}
	}
	b, err := json.Marshal(m)
	return b, err
}

// verificationJSON is Better Auth's verification value.
type verificationJSON struct {
	ID         string `json:"id"`
	Identifier string `json:"identifier"`
	Value      string `json:"value"`
	ExpiresAt  string `json:"expiresAt"`
	CreatedAt  string `json:"createdAt,omitempty"`
	UpdatedAt  string `json:"updatedAt,omitempty"`
}

// decodeVerification reads a verification value as authport's token: the
// identifier and the value.
func decodeVerification(raw string) (*core.VerificationToken, error) {
	var v struct {
		Identifier *string `json:"identifier"`
		Value      *string `json:"value"`
		ExpiresAt  *string `json:"expiresAt"`
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return nil, fmt.Errorf("%w: verification value: %v", shared.ErrCorrupt, err)
	}
	if v.Identifier == nil || v.Value == nil || v.ExpiresAt == nil {
		return nil, fmt.Errorf("%w: verification value without identifier, value or expiresAt", shared.ErrCorrupt)
	}
	exp, err := parseISO(*v.ExpiresAt)
	if err != nil {
		return nil, err
	}
	return &core.VerificationToken{Identifier: *v.Identifier, Token: *v.Value, Expires: exp}, nil
}
