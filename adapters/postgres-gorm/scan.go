package gormadapter

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/authport/authport/core"
)

// nullTime scans a nullable time from any of the three drivers: time.Time
// (pgx; go-sql-driver/mysql with parseTime=true; go-sqlite3 for DATETIME
// columns) or text (go-sql-driver/mysql without parseTime, in UTC; SQLite
// columns without a date type). The result is normalised: UTC, milliseconds.
type nullTime struct {
	t     time.Time
	valid bool
}

// Scan implements sql.Scanner.
func (n *nullTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		n.t, n.valid = time.Time{}, false
		return nil
	case time.Time:
		n.t, n.valid = core.NormalizeTime(v), true
		return nil
	case int64:
		// Milliseconds since the Unix epoch: SQLite INTEGER columns
		// (WithSQLiteTimes(SQLiteTimeUnixMilli), drizzle's timestamp_ms).
		n.t, n.valid = core.NormalizeTime(time.UnixMilli(v)), true
		return nil
	case []byte:
		return n.parse(string(v))
	case string:
		return n.parse(v)
	}
	return fmt.Errorf("cannot read a time from %T", src)
}

func (n *nullTime) parse(s string) error {
	for _, l := range [...]string{
		"2006-01-02 15:04:05.999999999",
		"2006-01-02T15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02T15:04:05.999999999",
		"2006-01-02",
	} {
		if t, err := time.ParseInLocation(l, s, time.UTC); err == nil {
			n.t, n.valid = core.NormalizeTime(t), true
			return nil
		}
	}
	return fmt.Errorf("cannot read a time from %q", s)
}

// The times the adapter stores: the years 1 to 9999. SQLite keeps times as
// text with four-digit years, MySQL's driver refuses other years, and
// pgx's microsecond count overflows far out (such a time read back as 1970).
var (
	minTime = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
)

// checkTime returns an error matching core.ErrInvalidInput for a time
// outside the years 1 to 9999.
func checkTime(method core.Method, field string, t *time.Time) error {
	if t != nil && (t.Before(minTime) || !t.Before(maxTime)) {
		return &core.InputError{Method: string(method), Field: field, Reason: "is outside the years 1 to 9999 that SQL databases store"}
	}
	return nil
}

func (n *nullTime) ptr() *time.Time {
	if !n.valid {
		return nil
	}
	t := n.t
	return &t
}

func strPtr(n sql.NullString) *string {
	if !n.Valid {
		return nil
	}
	s := n.String
	return &s
}

func int64Ptr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}

func nullStr(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// nullIfEmpty is the stored form of an optional string field whose
// absence is "" (an e-mail address, a username): NULL, so that a unique
// index holds any number of users without one.
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// userRow scans the user columns in the order of the adapter's SELECTs.
// The application columns (queries.extras) follow the standard ones.
type userRow struct {
	id string
	// email and username are NULL for a user without one.
	email, username sql.NullString
	verified        nullTime
	// verifiedBool is read in place of verified where the column is a
	// boolean (shape.boolVerified); emptyName: "" reads as nil
	// (shape.requireEmail).
	verifiedBool sql.NullBool
	boolVerified bool
	emptyName    bool
	name, image  sql.NullString
	extras       []dataColumn
	data         []dataCell
	// usernames reports whether the statements return the username
	// column (the table has one).
	usernames bool
}

// newUserRow returns a row for the user columns of q's statements.
func newUserRow(q *queries) *userRow {
	r := &userRow{extras: q.extras, data: make([]dataCell, len(q.extras)), usernames: q.keepsUsernames(),
		boolVerified: q.shape.boolVerified, emptyName: q.shape.requireEmail}
	for i, c := range q.extras {
		r.data[i].kind = c.kind
	}
	return r
}

func (r *userRow) dest() []any {
	d := []any{&r.id, &r.email, &r.verified, &r.name, &r.image}
	if r.boolVerified {
		d[2] = &r.verifiedBool
	}
	if r.usernames {
		d = append(d, &r.username)
	}
	for i := range r.data {
		d = append(d, &r.data[i])
	}
	return d
}

func (r *userRow) user() *core.User {
	u := &core.User{
		ID:            r.id,
		Email:         r.email.String,
		Username:      r.username.String,
		EmailVerified: r.verified.ptr(),
		Name:          strPtr(r.name),
		Image:         strPtr(r.image),
	}
	if r.boolVerified && r.verifiedBool.Bool {
		u.EmailVerified = new(verifiedUnknown)
	}
	if r.emptyName && u.Name != nil && *u.Name == "" {
		u.Name = nil
	}
	u.Data = dataMap(r.extras, r.data)
	return u
}

// dataMap returns the application fields of a user: the JSON values of
// the extra columns that are not NULL, by name (nil when none is).
func dataMap(extras []dataColumn, cells []dataCell) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	for i, c := range cells {
		if c.value == nil {
			continue
		}
		if m == nil {
			m = make(map[string]json.RawMessage)
		}
		m[extras[i].name] = c.value
	}
	return m
}

// accountRow scans the account columns in the order of the adapter's SELECTs.
type accountRow struct {
	userID, provider, providerAccountID string
	// typ is NULL where the table has no type column (derived on read).
	typ                  sql.NullString
	accessToken, details sql.NullString
	expiresAt, expiresIn sql.NullInt64
	// expiresTime is read in place of expiresAt where that column is a
	// timestamp (timeExpiry: shape.expiryTime).
	expiresTime                             nullTime
	timeExpiry                              bool
	idToken, refreshToken, scope, tokenType sql.NullString
	sessionState, password                  sql.NullString
}

func (r *accountRow) dest() []any {
	var exp any = &r.expiresAt
	if r.timeExpiry {
		exp = &r.expiresTime
	}
	return []any{&r.userID, &r.typ, &r.provider, &r.providerAccountID,
		&r.accessToken, &r.details, exp, &r.expiresIn,
		&r.idToken, &r.refreshToken, &r.scope, &r.tokenType, &r.sessionState, &r.password}
}

func (r *accountRow) account() (*core.Account, error) {
	a := &core.Account{
		UserID:            r.userID,
		Type:              core.AccountType(r.typ.String),
		Provider:          r.provider,
		ProviderAccountID: r.providerAccountID,
		AccessToken:       strPtr(r.accessToken),
		ExpiresAt:         int64Ptr(r.expiresAt),
		ExpiresIn:         int64Ptr(r.expiresIn),
		IDToken:           strPtr(r.idToken),
		RefreshToken:      strPtr(r.refreshToken),
		Scope:             strPtr(r.scope),
		// Lowercased on read too: another application sharing the table
		// may have stored "Bearer" (Auth.js's pg and drizzle adapters do).
		TokenType:    core.NormalizeTokenType(strPtr(r.tokenType)),
		SessionState: strPtr(r.sessionState),
		PasswordHash: strPtr(r.password),
	}
	if !r.typ.Valid { // no type column
		a.Type = derivedAccountType(a.Provider)
	}
	if r.timeExpiry && r.expiresTime.valid {
		a.ExpiresAt = new(r.expiresTime.t.Unix())
	}
	if r.details.Valid {
		ds := []core.AuthorizationDetail{}
		if err := json.Unmarshal([]byte(r.details.String), &ds); err != nil {
			return nil, fmt.Errorf("stored authorization_details: %w", err)
		}
		a.AuthorizationDetails = ds
	}
	return a, nil
}

// encodeDetails is the stored form of authorization details: NULL for nil,
// a JSON array otherwise ("[]" for an empty list).
func encodeDetails(ds []core.AuthorizationDetail) (any, error) {
	if ds == nil {
		return nil, nil
	}
	b, err := json.Marshal(ds)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// expiryRow scans two key strings and an expiry: a session's token, user
// id and expires, or a verification token's identifier, token and expires,
// in the order of the adapter's SELECTs.
type expiryRow struct {
	first, second string
	expires       nullTime
}

func (r *expiryRow) dest() []any { return []any{&r.first, &r.second, &r.expires} }

func (r *expiryRow) session() *core.Session {
	return &core.Session{SessionToken: r.first, UserID: r.second, Expires: r.expires.t}
}

func (r *expiryRow) verificationToken() *core.VerificationToken {
	return &core.VerificationToken{Identifier: r.first, Token: r.second, Expires: r.expires.t}
}

// sessionRow scans a session with its metadata, in the order of the
// listSessions SELECT (NULL for a metadata column not kept).
type sessionRow struct {
	expiryRow
	created, updated nullTime
	ip, ua           sql.NullString
}

func (r *sessionRow) dest() []any {
	return append(r.expiryRow.dest(), &r.created, &r.updated, &r.ip, &r.ua)
}

func (r *sessionRow) session() core.Session {
	s := r.expiryRow.session()
	s.CreatedAt, s.UpdatedAt, s.IPAddress, s.UserAgent = r.created.t, r.updated.t, r.ip.String, r.ua.String
	return *s
}

// authenticatorRow scans the authenticator columns.
type authenticatorRow struct {
	credentialID, publicKey string
	counter                 int64
	backedUp                bool
	deviceType, accountID   string
	userID                  string
	transports              sql.NullString
}

func (r *authenticatorRow) dest() []any {
	return []any{&r.credentialID, &r.publicKey, &r.counter, &r.backedUp,
		&r.deviceType, &r.accountID, &r.userID, &r.transports}
}

func (r *authenticatorRow) authenticator() core.Authenticator {
	return core.Authenticator{
		CredentialID:         r.credentialID,
		CredentialPublicKey:  r.publicKey,
		Counter:              r.counter,
		CredentialBackedUp:   r.backedUp,
		CredentialDeviceType: r.deviceType,
		ProviderAccountID:    r.accountID,
		UserID:               r.userID,
		Transports:           strPtr(r.transports),
	}
}
