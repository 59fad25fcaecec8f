package oauthtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Errors of [DexServer.Login], matched with errors.Is.
var (
	// ErrDexLogin is wrapped by every error of [DexServer.Login].
	ErrDexLogin = errors.New("dex login failed")
	// ErrDexLoginRejected is wrapped when dex rejects the email and password.
	ErrDexLoginRejected = errors.New("dex rejected the email and password")
)

// dexMaxSteps bounds the pages one login goes through; dex needs three or
// four.
const dexMaxSteps = 12

// Login signs in at dex as a browser would, starting from authURL (an
// authorization request to d.Issuer + "/auth", as the client under test
// builds it), with a fresh cookie jar: it follows dex's own redirects,
// chooses the password connector when dex lists several, fills in and
// submits the login form dex renders (field names and target read from the
// page), and approves the request if dex asks. It returns the redirect to
// the client's redirect_uri, carrying code and state, or error and
// error_description, without requesting it.
//
// An error wraps [ErrDexLogin] and says what dex answered (status and page
// text); a wrong email or password wraps [ErrDexLoginRejected] too. Login is
// safe for concurrent use.
func (d *DexServer) Login(ctx context.Context, authURL, email, password string) (*url.URL, error) {
	fail := func(format string, args ...any) (*url.URL, error) {
		return nil, fmt.Errorf("%w: "+format, append([]any{ErrDexLogin}, args...)...)
	}
	if d == nil {
		return fail("no dex server (Dex skipped or failed the test)")
	}
	issuer, err := url.Parse(d.Issuer)
	if err != nil {
		return fail("issuer %q: %w", d.Issuer, err)
	}
	start, err := url.Parse(authURL)
	if err != nil {
		return fail("authorization URL %q: %w", authURL, err)
	}
	if !d.owns(issuer, start) {
		return fail("authorization URL %q is not on this dex server (%s)", authURL, d.Issuer)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return fail("cookie jar: %w", err)
	}
	client := &http.Client{
		Jar:     jar,
		Timeout: 30 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !d.owns(issuer, req.URL) {
				return http.ErrUseLastResponse // the redirect out of dex: ours to return
			}
			if len(via) >= dexMaxSteps {
				return fmt.Errorf("more than %d redirects", dexMaxSteps)
			}
			return nil
		},
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, start.String(), nil)
	if err != nil {
		return fail("%w", err)
	}
	submitted := false // whether the credentials were posted
	for step := 0; step < dexMaxSteps; step++ {
		resp, err := client.Do(req)
		if err != nil {
			return fail("%s %s: %w", req.Method, req.URL.Redacted(), err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		if err != nil {
			return fail("reading %s: %w", resp.Request.URL.Redacted(), err)
		}
		here := resp.Request.URL
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			target, err := here.Parse(loc)
			if err != nil {
				return fail("dex redirected to %q: %w", loc, err)
			}
			return target, nil
		}
		page := parsePage(body)
		// dex shows the login form again, with 401, for a wrong email or
		// password.
		if form, ok := page.passwordForm(); ok && (resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized) {
			if submitted {
				return nil, fmt.Errorf("%w: %w: dex answered %s with the login form again: %s",
					ErrDexLogin, ErrDexLoginRejected, resp.Status, pageText(body))
			}
			req, err = form.request(ctx, here, email, password)
			if err != nil {
				return fail("%w", err)
			}
			submitted = true
			continue
		}
		if resp.StatusCode != http.StatusOK {
			return fail("%s %s: dex answered %s: %s", req.Method, here.Path, resp.Status, pageText(body))
		}
		if form, ok := page.approvalForm(); ok {
			if req, err = form.request(ctx, here, "", ""); err != nil {
				return fail("%w", err)
			}
			continue
		}
		if link, ok := page.passwordConnector(here); ok {
			if req, err = http.NewRequestWithContext(ctx, http.MethodGet, link.String(), nil); err != nil {
				return fail("%w", err)
			}
			continue
		}
		return fail("%s %s: dex showed a page with no login form, connector or approval (%s): %s",
			req.Method, here.Path, resp.Status, pageText(body))
	}
	return fail("no redirect to the client after %d pages", dexMaxSteps)
}

// owns reports whether u is one of this dex server's pages: same scheme and
// host as the issuer, and a path under the issuer's.
func (d *DexServer) owns(issuer, u *url.URL) bool {
	return u.Scheme == issuer.Scheme && u.Host == issuer.Host &&
		(u.Path == issuer.Path || strings.HasPrefix(u.Path, strings.TrimSuffix(issuer.Path, "/")+"/"))
}

// request returns the request that submits f from the page at base, with
// email in its text or email input and password in its password input.
// Other inputs keep the values the page gave them; unchecked checkboxes are
// left out, as a browser does.
func (f htmlForm) request(ctx context.Context, base *url.URL, email, password string) (*http.Request, error) {
	target, err := base.Parse(f.action)
	if err != nil {
		return nil, fmt.Errorf("form action %q: %w", f.action, err)
	}
	values := url.Values{}
	for _, in := range f.inputs {
		if in.name == "" {
			continue
		}
		switch in.typ {
		case "password":
			values.Set(in.name, password)
		case "text", "email":
			values.Set(in.name, email)
		case "checkbox", "radio":
			if in.checked {
				values.Add(in.name, cmpOr(in.value, "on"))
			}
		case "submit", "button", "image", "reset", "file":
		default: // hidden and the rest
			values.Add(in.name, in.value)
		}
	}
	if f.method == http.MethodGet {
		target.RawQuery = values.Encode()
		return http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target.String(), strings.NewReader(values.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// pageText returns the visible text of an HTML page, tags and scripts
// removed and white space collapsed, cut to 400 bytes: enough to say what
// dex answered.
func pageText(body []byte) string {
	text := visibleText(body)
	if text == "" {
		return "(empty page)"
	}
	if len(text) > 400 {
		cut := 400
		for cut > 0 && !utf8RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "…"
	}
	return strconv.Quote(text)
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// visibleText strips tags, scripts and styles from an HTML page and
// collapses white space.
func visibleText(body []byte) string {
	var b strings.Builder
	for _, tok := range tokenize(body) {
		if tok.text != "" {
			b.WriteString(tok.text)
			b.WriteByte(' ')
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
