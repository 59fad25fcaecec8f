package mongoadapter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/authport/authport/core"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Field names, as Auth.js's MongoDB adapter writes them.
const (
	fID                   = "_id"
	fEmail                = "email"
	fUsername             = "username"
	fEmailVerified        = "emailVerified"
	fName                 = "name"
	fImage                = "image"
	fUserID               = "userId"
	fType                 = "type"
	fProvider             = "provider"
	fProviderAccountID    = "providerAccountId"
	fAccessToken          = "access_token"
	fAuthorizationDetails = "authorization_details"
	fExpiresAt            = "expires_at"
	fExpiresIn            = "expires_in"
	fIDToken              = "id_token"
	fRefreshToken         = "refresh_token"
	fScope                = "scope"
	fTokenType            = "token_type"
	fSessionState         = "session_state"
	// fPassword is a password account's hash, named as Better Auth names
	// it; present only when the account has one.
	fPassword             = "password"
	fSessionToken         = "sessionToken"
	fExpires              = "expires"
	fCreatedAt            = "createdAt"
	fUpdatedAt            = "updatedAt"
	fIPAddress            = "ipAddress"
	fUserAgent            = "userAgent"
	fIdentifier           = "identifier"
	fToken                = "token"
	fCredentialID         = "credentialID"
	fCredentialPublicKey  = "credentialPublicKey"
	fCounter              = "counter"
	fCredentialBackedUp   = "credentialBackedUp"
	fCredentialDeviceType = "credentialDeviceType"
	fTransports           = "transports"
	// The fields of a second factor (authport's own: Auth.js has none).
	fSecret     = "secret"
	fStep       = "step"
	fLastUsedAt = "lastUsedAt"

	// fJoinedUser is the array a $lookup stage writes the user into.
	fJoinedUser = "user"
)

// Field names of Better Auth's documents ([BetterAuth]) where they differ
// from Auth.js's, and the fields authport adds to them for what Better Auth
// has no field for (Better Auth ignores fields its schema does not name).
const (
	baToken                = "token"     // session token
	baExpiresAt            = "expiresAt" // sessions and verification values
	baProviderID           = "providerId"
	baAccountID            = "accountId"
	baAccessToken          = "accessToken"
	baRefreshToken         = "refreshToken"
	baIDToken              = "idToken"
	baAccessTokenExpiresAt = "accessTokenExpiresAt"
	baValue                = "value" // verification value: the token
	// authport's own fields in Better Auth's documents.
	baEmailVerifiedAt      = "emailVerifiedAt"
	baExpiresIn            = "expiresIn"
	baTokenType            = "tokenType"
	baSessionState         = "sessionState"
	baAuthorizationDetails = "authorizationDetails"
)

// fieldNames are the names of the fields whose names differ between the
// Auth.js layout (the default) and Better Auth's ([BetterAuth]) and that
// filters, sorts and indexes name.
type fieldNames struct {
	sessionToken      string
	expires           string // of sessions and verification tokens
	provider          string
	providerAccountID string
	token             string // of verification tokens
}

func authJSFields() fieldNames {
	return fieldNames{sessionToken: fSessionToken, expires: fExpires, provider: fProvider,
		providerAccountID: fProviderAccountID, token: fToken}
}

func betterAuthFields() fieldNames {
	return fieldNames{sessionToken: baToken, expires: baExpiresAt, provider: baProviderID,
		providerAccountID: baAccountID, token: baValue}
}

// epoch is what Better Auth's emailVerified true reads as when authport
// did not record the time (see [BetterAuth]).
func epoch() time.Time { return time.Unix(0, 0).UTC() }

// userDoc is a stored user; see [userDoc.UnmarshalBSON].
type userDoc struct {
	ID            bson.RawValue
	Email         string
	Username      string
	EmailVerified *bson.DateTime
	// Verified is emailVerified stored as a boolean (Better Auth's); nil
	// when it is a date or null.
	Verified *bool
	// VerifiedAt is emailVerifiedAt, a date (authport's field in Better
	// Auth's user documents); it is also in Data.
	VerifiedAt *bson.DateTime
	Name       *string
	Image      *string
	Data       map[string]json.RawMessage
}

// accountDoc is a stored account.
type accountDoc struct {
	UserID               bson.RawValue `bson:"userId"`
	Type                 *string       `bson:"type"` // nil: absent or null
	Provider             string        `bson:"provider"`
	ProviderAccountID    string        `bson:"providerAccountId"`
	AccessToken          *string       `bson:"access_token"`
	AuthorizationDetails bson.RawValue `bson:"authorization_details"`
	ExpiresAt            *int64        `bson:"expires_at"`
	ExpiresIn            *int64        `bson:"expires_in"`
	IDToken              *string       `bson:"id_token"`
	RefreshToken         *string       `bson:"refresh_token"`
	Scope                *string       `bson:"scope"`
	TokenType            *string       `bson:"token_type"`
	SessionState         *string       `bson:"session_state"`
	Password             bson.RawValue `bson:"password"`

	// Better Auth's names ([BetterAuth]): a document has these or the
	// ones above.
	ProviderID             *string       `bson:"providerId"`
	AccountID              string        `bson:"accountId"`
	BAAccessToken          *string       `bson:"accessToken"`
	BARefreshToken         *string       `bson:"refreshToken"`
	BAIDToken              *string       `bson:"idToken"`
	AccessTokenExpiresAt   bson.RawValue `bson:"accessTokenExpiresAt"`
	BAExpiresIn            *int64        `bson:"expiresIn"`
	BATokenType            *string       `bson:"tokenType"`
	BASessionState         *string       `bson:"sessionState"`
	BAAuthorizationDetails bson.RawValue `bson:"authorizationDetails"`
}

// accountUserDoc is an account joined with its user by $lookup.
type accountUserDoc struct {
	User []userDoc `bson:"user"`
}

// sessionDoc is a stored session without its metadata: what every read
// but the listing of a user's sessions decodes (getSessionAndUser is the
// read of every request and has no use for it).
type sessionDoc struct {
	SessionToken string        `bson:"sessionToken"`
	UserID       bson.RawValue `bson:"userId"`
	Expires      bson.DateTime `bson:"expires"`
	// Better Auth's names ([BetterAuth]): a document has these or the
	// ones above.
	Token     string         `bson:"token"`
	ExpiresAt *bson.DateTime `bson:"expiresAt"`
}

// sessionMetaDoc is a stored session with its metadata (see
// [core.Session]): fields of the session document named as Better Auth
// names them, absent when unknown. Auth.js's adapter stores none of them and
// passes them through. A field of another BSON type, written by another
// application, reads as unknown.
type sessionMetaDoc struct {
	Session   sessionDoc    `bson:",inline"`
	CreatedAt bson.RawValue `bson:"createdAt"`
	UpdatedAt bson.RawValue `bson:"updatedAt"`
	IPAddress bson.RawValue `bson:"ipAddress"`
	UserAgent bson.RawValue `bson:"userAgent"`
}

// sessionUserDoc is a session joined with its user by $lookup.
type sessionUserDoc struct {
	Session sessionDoc `bson:",inline"`
	User    []userDoc  `bson:"user"`
}

// sessionAndUser converts a joined session; nil when the user is gone.
// conv converts the user (see [Adapter.toUser]).
func (d *sessionUserDoc) sessionAndUser(conv func(*userDoc) (*core.User, error)) (*core.SessionAndUser, error) {
	if len(d.User) == 0 {
		return nil, nil
	}
	s, err := d.Session.session()
	if err != nil {
		return nil, err
	}
	u, err := conv(&d.User[0])
	if err != nil {
		return nil, err
	}
	return &core.SessionAndUser{Session: *s, User: *u}, nil
}

// tokenDoc is a stored verification token.
type tokenDoc struct {
	Identifier string        `bson:"identifier"`
	Token      string        `bson:"token"`
	Expires    bson.DateTime `bson:"expires"`
	// Better Auth's names ([BetterAuth]): a document has these or the
	// ones above.
	Value     string         `bson:"value"`
	ExpiresAt *bson.DateTime `bson:"expiresAt"`
}

// tokenIDDoc is a stored verification token with its _id.
type tokenIDDoc struct {
	ID    bson.RawValue `bson:"_id"`
	Token tokenDoc      `bson:",inline"`
}

// authenticatorDoc is a stored authenticator.
type authenticatorDoc struct {
	CredentialID         string        `bson:"credentialID"`
	UserID               bson.RawValue `bson:"userId"`
	ProviderAccountID    string        `bson:"providerAccountId"`
	CredentialPublicKey  string        `bson:"credentialPublicKey"`
	Counter              int64         `bson:"counter"`
	CredentialBackedUp   bool          `bson:"credentialBackedUp"`
	CredentialDeviceType string        `bson:"credentialDeviceType"`
	Transports           *string       `bson:"transports"`
}

// factorDoc is a stored second factor; see [factorDocument].
type factorDoc struct {
	ID         bson.RawValue `bson:"_id"`
	UserID     bson.RawValue `bson:"userId"`
	Type       string        `bson:"type"`
	Name       string        `bson:"name"`
	Secret     bson.RawValue `bson:"secret"`
	Step       int64         `bson:"step"`
	CreatedAt  bson.DateTime `bson:"createdAt"`
	LastUsedAt bson.RawValue `bson:"lastUsedAt"`
}

// detailDoc is one stored authorization details object. Nil lists are
// absent; empty ones are stored as [].
type detailDoc struct {
	Type       string        `bson:"type"`
	Locations  bson.RawValue `bson:"locations"`
	Actions    bson.RawValue `bson:"actions"`
	Datatypes  bson.RawValue `bson:"datatypes"`
	Identifier string        `bson:"identifier"`
	Privileges bson.RawValue `bson:"privileges"`
}

// userIDValue returns the stored form of a user id: the string itself, or
// an ObjectId with [WithObjectIDs]. ok is false for an id that mode cannot
// hold.
//
// With [BetterAuth] (and without [WithObjectIDs]) an id that is an
// ObjectId in lowercase hexadecimal is stored as that ObjectId, any other
// as a string.
func (a *Adapter) userIDValue(id string) (v any, ok bool) {
	if !a.objectIDs && !a.ba {
		return id, true
	}
	oid, isOID := objectID(id)
	switch {
	case isOID:
		return oid, true
	case a.objectIDs:
		return nil, false
	}
	return id, true
}

// objectID returns the ObjectId whose lowercase hexadecimal form is id;
// false for any other string.
func objectID(id string) (bson.ObjectID, bool) {
	if len(id) != 24 {
		return bson.ObjectID{}, false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return bson.ObjectID{}, false
		}
	}
	oid, err := bson.ObjectIDFromHex(id)
	return oid, err == nil
}

// idString decodes a stored user id, string or ObjectId.
func idString(rv bson.RawValue) (string, error) {
	switch rv.Type {
	case bson.TypeString:
		return rv.StringValue(), nil
	case bson.TypeObjectID:
		return rv.ObjectID().Hex(), nil
	}
	return "", fmt.Errorf("stored user id has BSON type %v, want string or ObjectId", rv.Type)
}

// Bounds of the times BSON dates (int64 milliseconds since the epoch) hold.
const maxDateYear = 292_000_000

// date returns the stored form of a time, or false when BSON cannot hold it.
func date(t time.Time) (bson.DateTime, bool) {
	if y := t.Year(); y > maxDateYear || y < -maxDateYear {
		return 0, false
	}
	return bson.DateTime(t.UnixMilli()), true
}

// fromDate returns a stored date as a UTC time.
func fromDate(d bson.DateTime) time.Time { return time.UnixMilli(int64(d)).UTC() }

func (a *Adapter) userDocument(u core.User) (bson.D, error) {
	id, err := a.storedUserID(core.MethodCreateUser, "id", u.ID)
	if err != nil {
		return nil, err
	}
	if a.ba {
		return a.userDocumentBA(id, u)
	}
	var verified any
	if u.EmailVerified != nil {
		if verified, err = storedDate(core.MethodCreateUser, "emailVerified", *u.EmailVerified); err != nil {
			return nil, err
		}
	}
	doc := bson.D{{Key: fID, Value: id}}
	// No address and no username are absent fields, which the partial
	// unique indexes leave out (see [Adapter.Migrate]).
	doc = appendPresent(doc, fEmail, u.Email)
	doc = appendPresent(doc, fUsername, u.Username)
	return a.appendData(append(doc,
		bson.E{Key: fEmailVerified, Value: verified},
		bson.E{Key: fName, Value: u.Name},
		bson.E{Key: fImage, Value: u.Image},
	), u.Data)
}

// userDocumentBA is userDocument with [BetterAuth]: the user with the
// stored id as Better Auth stores it, its e-mail address required.
func (a *Adapter) userDocumentBA(id any, u core.User) (bson.D, error) {
	const m = core.MethodCreateUser
	if u.Email == "" {
		return nil, &core.InputError{Method: string(m), Field: "email", Reason: noEmailReason}
	}
	now, err := storedDate(m, "createdAt", a.now())
	if err != nil {
		return nil, err
	}
	doc := bson.D{{Key: fID, Value: id}, {Key: fEmail, Value: u.Email}}
	doc = appendPresent(doc, fUsername, u.Username)
	doc = append(doc, bson.E{Key: fEmailVerified, Value: u.EmailVerified != nil})
	if u.EmailVerified != nil {
		at, err := storedDate(m, "emailVerified", *u.EmailVerified)
		if err != nil {
			return nil, err
		}
		doc = append(doc, bson.E{Key: baEmailVerifiedAt, Value: at})
	}
	name := ""
	if u.Name != nil {
		name = *u.Name
	}
	return a.appendData(append(doc,
		bson.E{Key: fName, Value: name},
		bson.E{Key: fImage, Value: u.Image},
		bson.E{Key: fCreatedAt, Value: now},
		bson.E{Key: fUpdatedAt, Value: now},
	), u.Data)
}

// noEmailReason is why [BetterAuth] refuses a user without an address.
const noEmailReason = "is empty: Better Auth requires an e-mail address of every user (mongoadapter.BetterAuth); give the user one"

// toUser converts a stored user: [userDoc.user], and with [BetterAuth]
// Better Auth's fields beside authport's taken out of the application
// fields (createdAt, updatedAt, emailVerifiedAt) and a name of "" read as
// none.
func (a *Adapter) toUser(d *userDoc) (*core.User, error) {
	u, err := d.user()
	if err != nil || !a.ba {
		return u, err
	}
	for _, k := range []string{fCreatedAt, fUpdatedAt, baEmailVerifiedAt} {
		delete(u.Data, k)
	}
	if len(u.Data) == 0 {
		u.Data = nil
	}
	if u.Name != nil && *u.Name == "" {
		u.Name = nil
	}
	return u, nil
}

// appendPresent appends the string field key to doc unless v is "", which
// is stored as an absent field.
func appendPresent(doc bson.D, key, v string) bson.D {
	if v == "" {
		return doc
	}
	return append(doc, bson.E{Key: key, Value: v})
}

func (d *userDoc) user() (*core.User, error) {
	id, err := idString(d.ID)
	if err != nil {
		return nil, err
	}
	u := &core.User{ID: id, Email: d.Email, Username: d.Username, Name: d.Name, Image: d.Image, Data: d.Data}
	switch {
	case d.EmailVerified != nil:
		t := fromDate(*d.EmailVerified)
		u.EmailVerified = &t
	case d.Verified != nil && *d.Verified:
		// Better Auth's boolean: the time authport recorded beside it,
		// or the epoch when Better Auth set it.
		t := epoch()
		if d.VerifiedAt != nil {
			t = fromDate(*d.VerifiedAt)
		}
		u.EmailVerified = &t
	}
	return u, nil
}

func accountDocument(acc core.Account, userID any) bson.D {
	doc := bson.D{
		{Key: fUserID, Value: userID},
		{Key: fType, Value: string(acc.Type)},
		{Key: fProvider, Value: acc.Provider},
		{Key: fProviderAccountID, Value: acc.ProviderAccountID},
		{Key: fAccessToken, Value: acc.AccessToken},
		{Key: fAuthorizationDetails, Value: detailsValue(acc.AuthorizationDetails)},
		{Key: fExpiresAt, Value: acc.ExpiresAt},
		{Key: fExpiresIn, Value: acc.ExpiresIn},
		{Key: fIDToken, Value: acc.IDToken},
		{Key: fRefreshToken, Value: acc.RefreshToken},
		{Key: fScope, Value: acc.Scope},
		{Key: fTokenType, Value: acc.TokenType},
		{Key: fSessionState, Value: acc.SessionState},
	}
	if acc.PasswordHash != nil {
		doc = append(doc, bson.E{Key: fPassword, Value: *acc.PasswordHash})
	}
	return doc
}

// detailsValue returns the stored form of authorization details: nil, or
// an array of documents whose nil lists are absent.
func detailsValue(details []core.AuthorizationDetail) any {
	if details == nil {
		return nil
	}
	arr := make(bson.A, len(details))
	for i, det := range details {
		doc := bson.D{{Key: "type", Value: det.Type}}
		doc = appendList(doc, "locations", det.Locations)
		doc = appendList(doc, "actions", det.Actions)
		doc = appendList(doc, "datatypes", det.Datatypes)
		doc = append(doc, bson.E{Key: "identifier", Value: det.Identifier})
		doc = appendList(doc, "privileges", det.Privileges)
		arr[i] = doc
	}
	return arr
}

func appendList(doc bson.D, key string, list []string) bson.D {
	if list == nil {
		return doc
	}
	arr := make(bson.A, len(list))
	for i, s := range list {
		arr[i] = s
	}
	return append(doc, bson.E{Key: key, Value: arr})
}

// accountDocumentBA is the stored form of an account with [BetterAuth],
// with a new ObjectId as its _id and now as its createdAt and updatedAt.
func accountDocumentBA(acc core.Account, userID any, now bson.DateTime) (bson.D, error) {
	exp, err := expiresAtDate(core.MethodLinkAccount, acc.ExpiresAt)
	if err != nil {
		return nil, err
	}
	doc := bson.D{
		{Key: fID, Value: bson.NewObjectID()},
		{Key: baAccountID, Value: acc.ProviderAccountID},
		{Key: baProviderID, Value: acc.Provider},
		{Key: fUserID, Value: userID},
		{Key: baAccessToken, Value: acc.AccessToken},
		{Key: baRefreshToken, Value: acc.RefreshToken},
		{Key: baIDToken, Value: acc.IDToken},
		{Key: baAccessTokenExpiresAt, Value: exp},
		{Key: fScope, Value: acc.Scope},
	}
	if acc.PasswordHash != nil {
		doc = append(doc, bson.E{Key: fPassword, Value: *acc.PasswordHash})
	}
	doc = append(doc,
		bson.E{Key: fCreatedAt, Value: now},
		bson.E{Key: fUpdatedAt, Value: now},
		bson.E{Key: fType, Value: string(acc.Type)},
	)
	// authport's fields, only where set.
	for _, f := range []struct {
		key string
		set bool
		v   any
	}{
		{baExpiresIn, acc.ExpiresIn != nil, acc.ExpiresIn},
		{baTokenType, acc.TokenType != nil, acc.TokenType},
		{baSessionState, acc.SessionState != nil, acc.SessionState},
		{baAuthorizationDetails, acc.AuthorizationDetails != nil, detailsValue(acc.AuthorizationDetails)},
	} {
		if f.set {
			doc = append(doc, bson.E{Key: f.key, Value: f.v})
		}
	}
	return doc, nil
}

// expiresAtDate is the stored form of core.Account.ExpiresAt with
// [BetterAuth]: accessTokenExpiresAt, a date (null for nil). Seconds BSON
// dates cannot hold are an error of method m.
func expiresAtDate(m core.Method, sec *int64) (any, error) {
	if sec == nil {
		return nil, nil
	}
	const limit = int64(maxDateYear) * 366 * 24 * 3600
	if *sec > limit || *sec < -limit {
		return nil, &core.InputError{Method: string(m), Field: "expiresAt", Reason: "is out of the range of BSON dates (accessTokenExpiresAt)"}
	}
	return storedDate(m, "expiresAt", time.Unix(*sec, 0))
}

// accountBA converts an account stored in Better Auth's form.
func (d *accountDoc) accountBA() (*core.Account, error) {
	uid, err := idString(d.UserID)
	if err != nil {
		return nil, err
	}
	acc := &core.Account{
		UserID:            uid,
		Provider:          *d.ProviderID,
		ProviderAccountID: d.AccountID,
		AccessToken:       d.BAAccessToken,
		ExpiresIn:         d.BAExpiresIn,
		IDToken:           d.BAIDToken,
		RefreshToken:      d.BARefreshToken,
		Scope:             d.Scope,
		TokenType:         core.NormalizeTokenType(d.BATokenType),
		SessionState:      d.BASessionState,
	}
	if d.Type != nil {
		acc.Type = core.AccountType(*d.Type)
	} else {
		// Better Auth wrote it: it stores no type.
		// (as postgres-gorm's BetterAuth preset reads its accounts).
		acc.Type = core.AccountTypeOAuth
		if acc.Provider == core.PasswordProvider {
			acc.Type = core.AccountTypeCredentials
		}
	}
	if !isNull(d.AccessTokenExpiresAt) {
		ms, ok := d.AccessTokenExpiresAt.DateTimeOK()
		if !ok {
			return nil, fmt.Errorf("accessTokenExpiresAt has BSON type %v, want date", d.AccessTokenExpiresAt.Type)
		}
		sec := time.UnixMilli(ms).Unix()
		acc.ExpiresAt = &sec
	}
	if err := d.passwordInto(acc); err != nil {
		return nil, err
	}
	details, err := decodeDetails(d.BAAuthorizationDetails)
	if err != nil {
		return nil, err
	}
	acc.AuthorizationDetails = details
	return acc, nil
}

// deref returns *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// passwordInto sets the account's password hash from the stored one.
func (d *accountDoc) passwordInto(acc *core.Account) error {
	if isNull(d.Password) {
		return nil
	}
	h, ok := d.Password.StringValueOK()
	if !ok {
		return fmt.Errorf("password has BSON type %v, want string", d.Password.Type)
	}
	acc.PasswordHash = &h
	return nil
}

// account converts a stored account, in Auth.js's form or (with a
// providerId) Better Auth's.
func (d *accountDoc) account() (*core.Account, error) {
	if d.ProviderID != nil {
		return d.accountBA()
	}
	uid, err := idString(d.UserID)
	if err != nil {
		return nil, err
	}
	acc := &core.Account{
		UserID:            uid,
		Provider:          d.Provider,
		Type:              core.AccountType(deref(d.Type)),
		ProviderAccountID: d.ProviderAccountID,
		AccessToken:       d.AccessToken,
		ExpiresAt:         d.ExpiresAt,
		ExpiresIn:         d.ExpiresIn,
		IDToken:           d.IDToken,
		RefreshToken:      d.RefreshToken,
		Scope:             d.Scope,
		// This adapter stores token_type lowercased; another application
		// sharing the collection may not have.
		TokenType:    core.NormalizeTokenType(d.TokenType),
		SessionState: d.SessionState,
	}
	if err := d.passwordInto(acc); err != nil {
		return nil, err
	}
	details, err := decodeDetails(d.AuthorizationDetails)
	if err != nil {
		return nil, err
	}
	acc.AuthorizationDetails = details
	return acc, nil
}

func decodeDetails(rv bson.RawValue) ([]core.AuthorizationDetail, error) {
	return decodeArray(rv, "authorization_details", func(v bson.RawValue) (core.AuthorizationDetail, error) {
		var dd detailDoc
		if err := v.Unmarshal(&dd); err != nil {
			return core.AuthorizationDetail{}, fmt.Errorf("authorization_details: %w", err)
		}
		det := core.AuthorizationDetail{Type: dd.Type, Identifier: dd.Identifier}
		for _, f := range []struct {
			rv  bson.RawValue
			dst *[]string
		}{
			{dd.Locations, &det.Locations},
			{dd.Actions, &det.Actions},
			{dd.Datatypes, &det.Datatypes},
			{dd.Privileges, &det.Privileges},
		} {
			var err error
			if *f.dst, err = decodeArray(f.rv, "list", decodeString); err != nil {
				return det, fmt.Errorf("authorization_details: %w", err)
			}
		}
		return det, nil
	})
}

func decodeString(v bson.RawValue) (string, error) {
	s, ok := v.StringValueOK()
	if !ok {
		return "", fmt.Errorf("list element has BSON type %v, want string", v.Type)
	}
	return s, nil
}

// decodeArray decodes a stored array, named what in errors, element by
// element with elem; nil when it is absent or null.
func decodeArray[T any](rv bson.RawValue, what string, elem func(bson.RawValue) (T, error)) ([]T, error) {
	if isNull(rv) {
		return nil, nil
	}
	arr, ok := rv.ArrayOK()
	if !ok {
		return nil, fmt.Errorf("%s has BSON type %v, want array", what, rv.Type)
	}
	vals, err := arr.Values()
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(vals))
	for _, v := range vals {
		x, err := elem(v)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// isNull reports whether a decoded field was absent or null.
func isNull(rv bson.RawValue) bool {
	return rv.Type == 0 || rv.Type == bson.TypeNull || rv.Type == bson.TypeUndefined
}

func (d *sessionDoc) session() (*core.Session, error) {
	uid, err := idString(d.UserID)
	if err != nil {
		return nil, err
	}
	return &core.Session{SessionToken: d.token(), UserID: uid, Expires: fromDate(d.expiry())}, nil
}

// token is the session token: sessionToken, or Better Auth's token.
func (d *sessionDoc) token() string {
	if d.SessionToken == "" {
		return d.Token
	}
	return d.SessionToken
}

// expiry is the session's expiry: expires, or Better Auth's expiresAt.
func (d *sessionDoc) expiry() bson.DateTime {
	if d.ExpiresAt != nil {
		return *d.ExpiresAt
	}
	return d.Expires
}

// session converts a stored session with its metadata.
func (d *sessionMetaDoc) session() (*core.Session, error) {
	s, err := d.Session.session()
	if err != nil {
		return nil, err
	}
	s.CreatedAt, s.UpdatedAt = optionalDate(d.CreatedAt), optionalDate(d.UpdatedAt)
	s.IPAddress, _ = d.IPAddress.StringValueOK()
	s.UserAgent, _ = d.UserAgent.StringValueOK()
	return s, nil
}

// optionalDate reads a stored date that may be absent: the zero time when it
// is absent or not a date.
func optionalDate(rv bson.RawValue) time.Time {
	if ms, ok := rv.DateTimeOK(); ok {
		return fromDate(bson.DateTime(ms))
	}
	return time.Time{}
}

// sessionDocument returns the stored form of a session (normalised) of the
// user with the stored id uid: its metadata fields only where known.
func sessionDocument(s core.Session, uid any) (bson.D, error) {
	return sessionDocumentNamed(s, uid, authJSFields(), nil)
}

// sessionDocumentNamed is sessionDocument with the token and expiry fields
// named by f, and the _id id first unless it is nil.
func sessionDocumentNamed(s core.Session, uid any, f fieldNames, id any) (bson.D, error) {
	const m = core.MethodCreateSession
	exp, err := storedDate(m, "expires", s.Expires)
	if err != nil {
		return nil, err
	}
	var doc bson.D
	if id != nil {
		doc = append(doc, bson.E{Key: fID, Value: id})
	}
	doc = append(doc,
		bson.E{Key: f.sessionToken, Value: s.SessionToken},
		bson.E{Key: fUserID, Value: uid},
		bson.E{Key: f.expires, Value: exp},
	)
	for _, t := range []struct {
		key string
		t   time.Time
	}{{fCreatedAt, s.CreatedAt}, {fUpdatedAt, s.UpdatedAt}} {
		if t.t.IsZero() {
			continue
		}
		d, err := storedDate(m, t.key, t.t)
		if err != nil {
			return nil, err
		}
		doc = append(doc, bson.E{Key: t.key, Value: d})
	}
	if s.IPAddress != "" {
		doc = append(doc, bson.E{Key: fIPAddress, Value: s.IPAddress})
	}
	if s.UserAgent != "" {
		doc = append(doc, bson.E{Key: fUserAgent, Value: s.UserAgent})
	}
	return doc, nil
}

func (d *tokenDoc) token() (*core.VerificationToken, error) {
	if d.ExpiresAt != nil {
		// Better Auth's verification value.
		return &core.VerificationToken{Identifier: d.Identifier, Token: d.Value, Expires: fromDate(*d.ExpiresAt)}, nil
	}
	return &core.VerificationToken{Identifier: d.Identifier, Token: d.Token, Expires: fromDate(d.Expires)}, nil
}

func (d *authenticatorDoc) authenticator() (*core.Authenticator, error) {
	uid, err := idString(d.UserID)
	if err != nil {
		return nil, err
	}
	return &core.Authenticator{
		CredentialID:         d.CredentialID,
		CredentialPublicKey:  d.CredentialPublicKey,
		Counter:              d.Counter,
		CredentialBackedUp:   d.CredentialBackedUp,
		CredentialDeviceType: d.CredentialDeviceType,
		ProviderAccountID:    d.ProviderAccountID,
		UserID:               uid,
		Transports:           d.Transports,
	}, nil
}

// factorDocument returns the stored form of a factor (normalised) of the
// user with the stored id uid: its id as the _id, its secret as binary data
// (empty for none), its step as an int64, lastUsedAt only when it was used.
// A time BSON cannot hold is an error of method m.
func factorDocument(m core.Method, f core.Factor, uid any) (bson.D, error) {
	created, err := storedDate(m, "createdAt", f.CreatedAt)
	if err != nil {
		return nil, err
	}
	doc := bson.D{
		{Key: fID, Value: f.ID},
		{Key: fUserID, Value: uid},
		{Key: fType, Value: string(f.Type)},
		{Key: fName, Value: f.Name},
		{Key: fSecret, Value: secretValue(f.Secret)},
		{Key: fStep, Value: f.Step},
		{Key: fCreatedAt, Value: created},
	}
	if !f.LastUsedAt.IsZero() {
		used, err := storedDate(m, "lastUsedAt", f.LastUsedAt)
		if err != nil {
			return nil, err
		}
		doc = append(doc, bson.E{Key: fLastUsedAt, Value: used})
	}
	return doc, nil
}

// secretValue is the stored form of a factor's secret: binary data of the
// generic subtype, empty for nil, so that a filter on it compares bytes.
func secretValue(secret []byte) bson.Binary {
	if secret == nil {
		secret = []byte{}
	}
	return bson.Binary{Subtype: bson.TypeBinaryGeneric, Data: secret}
}

func (d *factorDoc) factor() (*core.Factor, error) {
	id, ok := d.ID.StringValueOK()
	if !ok {
		return nil, fmt.Errorf("stored factor id has BSON type %v, want string", d.ID.Type)
	}
	uid, err := idString(d.UserID)
	if err != nil {
		return nil, err
	}
	if d.Step < 0 {
		return nil, fmt.Errorf("factor %q: stored step is negative", id)
	}
	f := &core.Factor{
		ID:         id,
		UserID:     uid,
		Type:       core.FactorType(d.Type),
		Name:       d.Name,
		Step:       d.Step,
		CreatedAt:  fromDate(d.CreatedAt),
		LastUsedAt: optionalDate(d.LastUsedAt),
	}
	if !isNull(d.Secret) {
		_, data, ok := d.Secret.BinaryOK()
		if !ok {
			return nil, fmt.Errorf("factor %q: stored secret has BSON type %v, want binary data", id, d.Secret.Type)
		}
		if len(data) > 0 {
			f.Secret = bytes.Clone(data)
		}
	}
	return f, nil
}
