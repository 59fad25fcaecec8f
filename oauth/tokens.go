package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// TokenExpirySkew is how long before its expires_at an access token counts
// as expired: [Flow.AccessToken] refreshes it then, so that the token it
// returns is still valid when the provider's API receives it.
const TokenExpirySkew = 30 * time.Second

// refreshTimeout bounds one refresh (token request and storing the
// result). The refresh runs on after the caller that started it gives up,
// so that tokens the provider rotated are stored (see [Flow.AccessToken]).
const refreshTimeout = time.Minute

// AccessToken returns a valid access token of the user's account with the
// OAuth or OIDC provider providerID, for calling the provider's API. The
// account is found with the adapter's listAccountsByUserId extension; a
// user with several accounts at one provider fails with
// [ErrSeveralAccounts] (use [Flow.AccountAccessToken]).
//
// An access token whose expires_at is past, or within [TokenExpirySkew],
// is refreshed first: the refresh token stored on the account goes to the
// provider's token endpoint (grant_type=refresh_token, with the provider's
// client authentication), and what comes back (the new access token and
// expires_at, and the rotated refresh token, id_token and scope when
// returned, as the provider's Account callback keeps them) is stored on
// the account with the adapter's updateAccount extension before it is
// returned. A token without expires_at is returned as it is.
//
// Concurrent calls for one account through this Flow make one token
// request: the others wait for it and get its result (use one Flow per
// process, the one given to the handler too). This matters for
// providers that rotate refresh tokens, which refuse a used one: two
// refreshes would lose the user's grant. The refresh runs to its end
// (bounded by a minute) even when the caller that started it gives up, so
// that rotated tokens are stored. Instances in other processes are not
// coordinated; when the provider refuses a refresh token because another
// instance used it first, the tokens that instance stored are returned.
//
// Errors: core.ErrNotFound when the user has no account with the
// provider (never signed in with it, or it was unlinked: sign in with the
// provider first), [ErrSeveralAccounts], [ErrSignInAgain] (no refresh
// token, or the provider refused it), [ErrRefresh] (test ErrSignInAgain
// first), and core.ErrMissingAdapterMethod for an adapter without the
// extensions.
func (f *Flow) AccessToken(ctx context.Context, userID, providerID string) (string, error) {
	acc, err := f.userAccount(ctx, userID, providerID)
	if err != nil {
		return "", err
	}
	acc, err = f.fresh(ctx, *acc)
	if err != nil {
		return "", err
	}
	return *acc.AccessToken, nil
}

// AccountAccessToken is [Flow.AccessToken] for the account key names: it
// needs the adapter's getAccount, not listAccountsByUserId. It returns the
// whole account, with its valid (refreshed when needed) tokens.
func (f *Flow) AccountAccessToken(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	if f == nil || f.auth == nil {
		return nil, fmt.Errorf("%w: oauth: the Flow was not made by New", core.ErrInvalidConfig)
	}
	if _, err := f.auth.Edge().OAuthProvider(key.Provider); err != nil {
		return nil, err
	}
	acc, err := f.auth.Account(ctx, key)
	if err != nil {
		return nil, err
	}
	if acc == nil {
		return nil, fmt.Errorf("%w: %w: no account %q at provider %q; the user must sign in with it first", core.ErrNotFound, errNoAccount, key.ProviderAccountID, key.Provider)
	}
	return f.fresh(ctx, *acc)
}

// userAccount returns the user's one account with the provider.
func (f *Flow) userAccount(ctx context.Context, userID, providerID string) (*core.Account, error) {
	if f == nil || f.auth == nil {
		return nil, fmt.Errorf("%w: oauth: the Flow was not made by New", core.ErrInvalidConfig)
	}
	if _, err := f.auth.Edge().OAuthProvider(providerID); err != nil {
		return nil, err
	}
	accounts, err := f.auth.Accounts(ctx, userID)
	if err != nil {
		return nil, err
	}
	var found []core.Account
	for _, a := range accounts {
		if a.Provider == providerID {
			found = append(found, a)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("%w: %w: user %q has no account with provider %q; the user must sign in with it first", core.ErrNotFound, errNoAccount, userID, providerID)
	case 1:
		return &found[0], nil
	}
	return nil, fmt.Errorf("%w: user %q has %d accounts with provider %q; name one with AccountAccessToken", ErrSeveralAccounts, userID, len(found), providerID)
}

// valid reports whether the account's access token can be used at now.
func valid(a *core.Account, now time.Time) bool {
	if a.AccessToken == nil || *a.AccessToken == "" {
		return false
	}
	return a.ExpiresAt == nil || now.Add(TokenExpirySkew).Unix() < *a.ExpiresAt
}

// fresh returns acc with a valid access token, refreshed when needed.
func (f *Flow) fresh(ctx context.Context, acc core.Account) (*core.Account, error) {
	if valid(&acc, f.now()) {
		return &acc, nil
	}
	if acc.RefreshToken == nil || *acc.RefreshToken == "" {
		return nil, noRefreshToken(acc.Provider)
	}
	// A refresh whose result cannot be stored would use the refresh token
	// up (providers that rotate refuse it afterwards): refuse first.
	if !f.auth.Capabilities().HasExtension(core.ExtensionUpdateAccount) {
		return nil, fmt.Errorf("%w: refreshing provider tokens stores them with the adapter's updateAccount extension (core.AccountUpdater), which %s lacks",
			core.ErrMissingAdapterMethod, f.auth.Capabilities().Adapter())
	}
	key := core.AccountKey{Provider: acc.Provider, ProviderAccountID: acc.ProviderAccountID}
	return f.refreshes.do(ctx, key, func(ctx context.Context) (*core.Account, error) {
		return f.refresh(ctx, key)
	})
}

func noRefreshToken(providerID string) error {
	return fmt.Errorf("%w: %w: provider %q; request offline access (scope offline_access for OIDC, access_type=offline for Google) in the provider's Authorization.Params and have the user sign in again", ErrSignInAgain, errNoRefreshToken, providerID)
}

// refresh refreshes the account's tokens and stores them. It reads the
// account again first: a refresh that ended just before may have stored
// valid tokens already.
func (f *Flow) refresh(ctx context.Context, key core.AccountKey) (*core.Account, error) {
	acc, err := f.auth.Account(ctx, key)
	if err != nil {
		return nil, err
	}
	if acc == nil {
		return nil, fmt.Errorf("%w: %w: account %q at provider %q was unlinked", core.ErrNotFound, errNoAccount, key.ProviderAccountID, key.Provider)
	}
	if valid(acc, f.now()) {
		return acc, nil
	}
	if acc.RefreshToken == nil || *acc.RefreshToken == "" {
		return nil, noRefreshToken(key.Provider)
	}
	p, err := f.auth.Edge().OAuthProvider(key.Provider)
	if err != nil {
		return nil, err
	}
	o := p.Options()
	e, err := f.endpoints(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRefresh, err)
	}
	if e.tokenURL == "" {
		return nil, fmt.Errorf("%w: provider %q has a Token.Request handler and no token URL to refresh at; set Token.URL", ErrRefresh, o.ID)
	}
	used := *acc.RefreshToken
	ts, err := f.tokenRequest(ctx, o, e.tokenURL, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {used}})
	if errors.Is(err, errInvalidGrant) {
		// Another instance may have used the token first and stored
		// what the provider rotated it into.
		if now, rerr := f.auth.Account(ctx, key); rerr == nil && now != nil && now.RefreshToken != nil &&
			*now.RefreshToken != used && valid(now, f.now()) {
			return now, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if o.Type == provider.TypeOIDC && ts.IDToken != "" {
		if err := f.checkRefreshedIDToken(ctx, e, o, acc, ts.IDToken); err != nil {
			return nil, err
		}
	}
	kept := p.AccountTokens(ts, f.now())
	up := core.AccountUpdate{
		Provider: key.Provider, ProviderAccountID: key.ProviderAccountID,
		AccessToken: core.Set(&ts.AccessToken),
		// A new token without expires_at does not keep the old one's.
		ExpiresAt: core.Set(kept.ExpiresAt),
	}
	// The rotated refresh token is kept whatever the Account callback
	// does: the stored one was just used up.
	if ts.RefreshToken != "" {
		up.RefreshToken = core.Set(&ts.RefreshToken)
	}
	str := func(f *core.Field[*string], v string) {
		if v != "" {
			*f = core.Set(&v)
		}
	}
	str(&up.IDToken, kept.IDToken)
	str(&up.Scope, kept.Scope)
	str(&up.TokenType, kept.TokenType)
	str(&up.SessionState, kept.SessionState)
	if kept.ExpiresIn != nil {
		up.ExpiresIn = core.Set(kept.ExpiresIn)
	}
	stored, err := f.auth.UpdateAccount(ctx, up)
	if err != nil {
		return nil, fmt.Errorf("%w: provider %q: storing the refreshed tokens: %w", ErrRefresh, o.ID, err)
	}
	if stored == nil {
		return nil, fmt.Errorf("%w: %w: account %q at provider %q was unlinked during the refresh", core.ErrNotFound, errNoAccount, key.ProviderAccountID, key.Provider)
	}
	return stored, nil
}

// checkRefreshedIDToken verifies an id_token of a refresh response
// (signature, iss, aud, exp; OIDC Core §12.2) and that it is about the
// same subject as the one stored.
func (f *Flow) checkRefreshedIDToken(ctx context.Context, e *endpoints, o provider.OAuthOptions, acc *core.Account, raw string) error {
	idt, _, err := f.verifyIDToken(ctx, e, o, raw)
	if err != nil {
		return fmt.Errorf("%w: the refreshed id_token: %w", ErrRefresh, err)
	}
	if acc.IDToken != nil {
		if old := unverifiedSubject(*acc.IDToken); old != "" && old != idt.Subject {
			return fmt.Errorf("%w: provider %q: the refreshed id_token is for subject %q, the stored one for %q", ErrRefresh, o.ID, idt.Subject, old)
		}
	}
	return nil
}

// unverifiedSubject returns the sub claim of a JWT without verifying it
// (it was verified when stored), or "".
func unverifiedSubject(jwt string) string {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var c struct {
		Sub string `json:"sub"`
	}
	_ = json.Unmarshal(b, &c)
	return c.Sub
}

// tokenRequest posts form to the token endpoint with the provider's
// client authentication and returns the token response, or an error
// matching [ErrRefresh] (a [*TokenError] when the endpoint answered with
// an error).
func (f *Flow) tokenRequest(ctx context.Context, o provider.OAuthOptions, tokenURL string, form url.Values) (provider.TokenSet, error) {
	fail := func(err error) (provider.TokenSet, error) {
		return provider.TokenSet{}, fmt.Errorf("%w: provider %q: %w", ErrRefresh, o.ID, err)
	}
	form = cloneForm(form)
	basic := false
	switch m := o.Client.TokenEndpointAuthMethod; m {
	case "", "client_secret_basic":
		basic = true
	case "client_secret_post":
		form.Set("client_id", o.ClientID)
		form.Set("client_secret", o.ClientSecret)
	case "none", "tls_client_auth", "self_signed_tls_client_auth":
		form.Set("client_id", o.ClientID)
	case "client_secret_jwt", "private_key_jwt":
		form.Set("client_id", o.ClientID)
		a, err := f.clientAuth(o, tokenURL)
		if err != nil {
			return provider.TokenSet{}, err
		}
		for k := range a {
			form.Set(k, a.Get(k))
		}
	default:
		return provider.TokenSet{}, fmt.Errorf("%w: oauth: provider %q: token endpoint auth method %q is not supported for refreshing", core.ErrInvalidConfig, o.ID, m)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return fail(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic {
		// RFC 6749 §2.3.1: the credentials are form-encoded first.
		req.SetBasicAuth(url.QueryEscape(o.ClientID), url.QueryEscape(o.ClientSecret))
	}
	res, err := f.client.Do(req)
	if err != nil {
		return fail(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return fail(fmt.Errorf("POST %s: %w", tokenURL, err))
	}
	if res.StatusCode/100 != 2 {
		te := &TokenError{ProviderID: o.ID, StatusCode: res.StatusCode}
		var e struct {
			Code        string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(body, &e) == nil {
			te.Code, te.Description = e.Code, e.Description
		}
		return provider.TokenSet{}, te
	}
	ts, err := decodeTokens(body, res.Header.Get("Content-Type"))
	if err != nil {
		return fail(fmt.Errorf("POST %s: %w", tokenURL, err))
	}
	if ts.AccessToken == "" {
		if code, _ := ts.Extra["error"].(string); code != "" {
			// GitHub answers errors with 200.
			desc, _ := ts.Extra["error_description"].(string)
			return provider.TokenSet{}, &TokenError{ProviderID: o.ID, StatusCode: res.StatusCode, Code: code, Description: desc}
		}
		return fail(fmt.Errorf("POST %s: the answer has no access_token", tokenURL))
	}
	return ts, nil
}

// decodeTokens decodes a token response: JSON, or the form encoding some
// providers answer with.
func decodeTokens(body []byte, ctype string) (provider.TokenSet, error) {
	if mt, _, _ := mime.ParseMediaType(ctype); mt == "application/x-www-form-urlencoded" || mt == "text/plain" {
		if vals, err := url.ParseQuery(string(body)); err == nil {
			m := make(map[string]any, len(vals))
			for k := range vals {
				m[k] = vals.Get(k)
			}
			body, _ = json.Marshal(m)
		}
	}
	var ts provider.TokenSet
	err := json.Unmarshal(body, &ts)
	return ts, err
}

func cloneForm(v url.Values) url.Values {
	out := make(url.Values, len(v)+4)
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// flights runs one refresh per account at a time: callers for an account
// whose refresh is under way wait for it and share its result. Its zero
// value is ready to use.
type flights struct {
	mu sync.Mutex
	m  map[core.AccountKey]*flight
}

type flight struct {
	done chan struct{}
	acc  *core.Account
	err  error
}

// do runs fn for key unless a run for key is under way, and returns that
// run's result. fn runs detached from ctx's cancellation, bounded by
// refreshTimeout; a caller whose ctx ends stops waiting.
func (g *flights) do(ctx context.Context, key core.AccountKey, fn func(context.Context) (*core.Account, error)) (*core.Account, error) {
	g.mu.Lock()
	fl, ok := g.m[key]
	if !ok {
		if g.m == nil {
			g.m = map[core.AccountKey]*flight{}
		}
		fl = &flight{done: make(chan struct{})}
		g.m[key] = fl
		run, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
		go func() {
			defer cancel()
			fl.acc, fl.err = fn(run)
			g.mu.Lock()
			delete(g.m, key)
			g.mu.Unlock()
			close(fl.done)
		}()
	}
	g.mu.Unlock()
	select {
	case <-fl.done:
		if fl.err != nil {
			return nil, fl.err
		}
		acc := fl.acc.Clone()
		return &acc, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("oauth: waiting for the token refresh: %w", ctx.Err())
	}
}
