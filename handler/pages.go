package handler

import (
	"bytes"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/authport/authport/core/provider"
)

// safeColor returns c when it is a plain CSS colour (hex, a name, or an
// rgb()/hsl() form of digits), else "".
func safeColor(c string) string {
	c = strings.TrimSpace(c)
	only := func(s, set string) bool {
		for i := 0; i < len(s); i++ {
			if strings.IndexByte(set, s[i]) < 0 {
				return false
			}
		}
		return true
	}
	const hex, letters = "0123456789abcdefABCDEF", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	switch {
	case len(c) >= 4 && len(c) <= 9 && c[0] == '#' && only(c[1:], hex):
		return c
	case len(c) >= 1 && len(c) <= 30 && only(c, letters):
		return c
	}
	for _, fn := range []string{"rgb(", "rgba(", "hsl(", "hsla("} {
		if inner, ok := strings.CutPrefix(c, fn); ok && strings.HasSuffix(inner, ")") && len(inner) <= 61 &&
			len(inner) > 1 && only(inner[:len(inner)-1], "0123456789., %deg") {
			return c
		}
	}
	return ""
}

// textOn picks black or white text for a hex background.
func textOn(bg string) string {
	h := strings.TrimPrefix(bg, "#")
	if len(h) == 3 {
		h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
	}
	if !strings.HasPrefix(bg, "#") || len(h) < 6 {
		return "#fff"
	}
	v, err := strconv.ParseUint(h[:6], 16, 32)
	if err != nil {
		return "#fff"
	}
	r, g, b := float64(v>>16&0xff), float64(v>>8&0xff), float64(v&0xff)
	if 0.299*r+0.587*g+0.114*b > 150 {
		return "#000"
	}
	return "#fff"
}

// safeImage returns an http(s) URL or a site path for an <img>, else "".
func safeImage(u string) string {
	switch {
	case strings.HasPrefix(u, "https://"), strings.HasPrefix(u, "http://"):
	case strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//"):
	default:
		return ""
	}
	if strings.ContainsAny(u, "\\\"'<> \t\r\n") {
		return ""
	}
	return u
}

// buttonStyle is the inline style of a provider's button: BrandColor (or
// the deprecated Bg) as background, Text (deprecated) or a contrasting
// colour as text.
func buttonStyle(s provider.ButtonStyle) template.CSS {
	bg := safeColor(s.Color())
	if bg == "" {
		return ""
	}
	text := safeColor(s.Text)
	if text == "" {
		text = textOn(bg)
	}
	return template.CSS("--provider-bg:" + bg + ";--provider-color:" + text)
}

type pageProvider struct {
	ID, Name, Type         string
	SignInURL, CallbackURL string
	OptionsURL             string
	// CodeURL is where an e-mail provider with codes posts its form
	// (/email-code/{id}), "" otherwise.
	CodeURL string
	Style   template.CSS
	Logo    string
	Fields  []provider.CredentialField
}

type pageData struct {
	Base, CSRFToken, CallbackURL string
	Error, Heading, Message      string
	Home, Host                   string
	Providers                    []pageProvider
	HasPasskey                   bool
	BrandColor, ButtonText, Logo string
	// Title is the page's title; Register makes the passkey page a
	// registration page, for RegisterEmail (the signed-in user's address,
	// or "").
	Title         string
	Register      bool
	RegisterEmail string
	// LinkEmail and LinkToken are a mailed link's address and token, for
	// the forms the reset and verification links open.
	LinkEmail, LinkToken string
	// VerifyUsername is the username a verification e-mail carries (the
	// link's username parameter; for the code form, the sign-up's), which
	// its token and code were issued for: posted back unchanged.
	VerifyUsername string
	// HasBinding says the browser holds a code binding, which may be the
	// one of the sign-up a verification link confirms: the password is
	// then optional on the confirmation form.
	HasBinding bool
	// Password is the password provider, nil without one.
	Password *passwordPage
	// Kind is the verify-request page's type (email, verify-email,
	// reset-password); Email the address the mail went to, as typed;
	// CodeURL where its code form posts ("" for no code form).
	Kind, Email, CodeURL string
	// HasPassword says the signed-in user has a password (the change
	// and re-authentication pages), rather than none to set.
	HasPassword bool
	// Factor is what the second-factor pages show (factor_pages.go);
	// nil on the others.
	Factor *factorPage
}

// signInMessage is the sign-in page's message for an error code.
func signInMessage(code string) (string, bool) {
	switch code {
	case ErrorOAuthSignin, ErrorOAuthCallback:
		return "Try signing in with a different account.", true
	case ErrorOAuthAccountNotLinked:
		return "To confirm your identity, sign in with the same account you used originally.", true
	case ErrorEmailSignin:
		return "The e-mail could not be sent.", true
	case ErrorCredentialsSignin:
		return "Sign in failed. Check the details you provided are correct.", true
	case ErrorSessionRequired:
		return "Please sign in to access this page.", true
	case ErrorWebAuthnVerification:
		return "The passkey could not be verified. Try again.", true
	case ErrorMissingCSRF:
		return "The form could not be verified (its CSRF token is missing or wrong). Try again.", true
	case ErrorRateLimited:
		return "Too many attempts. Wait a few minutes, then try again.", true
	case ErrorBadRequest:
		return "Check the details you entered.", true
	case ErrorSecondFactor:
		return "The second step of your sign-in expired or was already used. Sign in again.", true
	}
	return "", false
}

// errorPage is the error page's heading and message for an error code.
func errorPage(code string) (heading, message string, ok bool) {
	switch code {
	case ErrorConfiguration:
		return "Server error", "There is a problem with the server configuration. Check the server logs for more information.", true
	case ErrorAccessDenied:
		return "Access Denied", "You do not have permission to sign in.", true
	case ErrorVerification:
		return "Unable to sign in", "The sign in link is no longer valid. It may have been used already or it may have expired.", true
	case ErrorMissingCSRF:
		return "Request refused", "The form could not be verified (its CSRF token is missing or wrong). Go back, reload the page and try again.", true
	}
	return "", "", false
}

func (h *Handler) pageData(r *http.Request, csrfToken, callbackURL string) pageData {
	d := pageData{
		Base: h.base, CSRFToken: csrfToken, CallbackURL: callbackURL,
		Home: h.origin + "/", Host: strings.TrimPrefix(strings.TrimPrefix(h.origin, "https://"), "http://"),
		BrandColor: safeColor(h.theme.BrandColor), ButtonText: safeColor(h.theme.ButtonText), Logo: safeImage(h.theme.Logo),
	}
	if d.BrandColor == "" {
		d.BrandColor = "#346df1"
	}
	if d.ButtonText == "" {
		d.ButtonText = textOn(d.BrandColor)
	}
	if code := r.URL.Query().Get("error"); code != "" {
		if len(code) > 64 {
			code = code[:64]
		}
		d.Error = code
		if m, ok := signInMessage(code); ok {
			d.Message = m
		} else if heading, m, ok := errorPage(code); ok {
			d.Heading, d.Message = heading, m
		} else {
			d.Message = "Unable to sign in."
		}
		if d.Heading == "" {
			d.Heading = "Error"
		}
	}
	for _, p := range h.providers {
		c := p.Common()
		pp := pageProvider{ID: c.ID, Name: c.Name, Type: string(c.Type),
			SignInURL: h.base + "/signin/" + pathEscape(c.ID), CallbackURL: h.base + "/callback/" + pathEscape(c.ID)}
		switch v := p.(type) {
		case provider.OAuthProvider:
			st := v.Options().Style
			pp.Style, pp.Logo = buttonStyle(st), h.providerLogo(st.Logo)
		case *provider.CredentialsConfig:
			pp.Fields = v.Fields
		case *provider.WebAuthnConfig:
			pp.OptionsURL = h.base + "/webauthn-options/" + pathEscape(c.ID)
			d.HasPasskey = true
		case *provider.EmailConfig:
			if v.Codes {
				pp.CodeURL = h.base + "/email-code/" + pathEscape(c.ID)
			}
		case *provider.PasswordConfig:
			d.Password = h.passwordPageOf(v)
		}
		d.Providers = append(d.Providers, pp)
	}
	return d
}

// providerLogo resolves a provider's logo: "/name.svg" against
// Theme.ProviderLogos (omitted when that is empty), anything else through
// safeImage.
func (h *Handler) providerLogo(logo string) string {
	if strings.HasPrefix(logo, "/") && !strings.HasPrefix(logo, "//") {
		if h.theme.ProviderLogos == "" {
			return ""
		}
		logo = strings.TrimSuffix(h.theme.ProviderLogos, "/") + logo
	}
	return safeImage(logo)
}

// serveProviderPage answers GET /signin/{provider}: the sign-in page with
// that provider alone; for a passkey provider with ?action=register, the
// page that creates a passkey. An unknown provider is a 404.
func (h *Handler) serveProviderPage(w http.ResponseWriter, r *http.Request, id string) {
	if h.pages.SignIn != "" {
		h.redirect(w, r, withQuery(h.pages.SignIn, r.URL.RawQuery))
		return
	}
	p, ok := h.byID[id]
	if !ok {
		writeJSON(w, http.StatusNotFound, errorBody{Error: "UnknownAction", Message: "no provider " + strconv.Quote(id) + " is configured"}, true)
		return
	}
	token, _ := h.csrf(w, r, "")
	d := h.pageData(r, token, h.callbackURL(w, r))
	for _, pp := range d.Providers {
		if pp.ID == id {
			d.Providers = []pageProvider{pp}
			break
		}
	}
	d.HasPasskey = p.Common().Type == provider.TypeWebAuthn
	d.Title = "Sign in with " + p.Common().Name
	if d.HasPasskey && r.URL.Query().Get("action") == "register" {
		d.Register, d.Title = true, "Create a passkey"
		d.Providers[0].OptionsURL += "?action=register"
		if s, err := h.Session(r); err == nil && s != nil && s.User.Email != nil {
			d.RegisterEmail = *s.User.Email
		}
	}
	h.render(w, http.StatusOK, "signin", d)
}

// render writes a built-in page.
func (h *Handler) render(w http.ResponseWriter, status int, name string, d pageData) {
	var b bytes.Buffer
	if err := h.tmpl.ExecuteTemplate(&b, name, d); err != nil {
		h.log.Error("authport: page not rendered", "page", name, "error", err)
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: ErrorConfiguration}, true)
		return
	}
	noStore(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self' https: http: data:; base-uri 'none'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// parsePages parses the built-in pages.
func parsePages() (*template.Template, error) {
	t, err := template.New("pages").Parse(pagesSource)
	if err != nil {
		return nil, err
	}
	return t.Parse(factorPagesSource)
}

const pagesSource = `
{{define "head"}}<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{{.}}</title>
<style>
:root{--brand:#346df1;--brand-text:#fff;color-scheme:light dark;--bg:#f3f4f6;--card:#fff;--text:#111827;--border:#d1d5db;--input-border:#9ca3af;--rule:#e5e7eb;--error-bg:#fef2f2;--error-text:#991b1b;--error-border:#fecaca}
@media (prefers-color-scheme:dark){:root{--bg:#161b22;--card:#0d1117;--text:#e6edf3;--border:#3d444d;--input-border:#6e7681;--rule:#30363d;--error-bg:#3c1618;--error-text:#ffc1c0;--error-border:#8e1519}}
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--text)}
a{color:inherit}
main{max-width:22rem;margin:4rem auto;padding:2rem;background:var(--card);border-radius:.75rem;box-shadow:0 1px 3px rgba(0,0,0,.15)}
h1{font-size:1.4rem;margin:0 0 1rem}
form{margin:0 0 1rem}
label{display:block;font-size:.9rem;margin:.5rem 0 .25rem}
input[type=text],input[type=email],input[type=password],input:not([type]),input[type=number],input[type=tel]{box-sizing:border-box;width:100%;padding:.6rem;border:1px solid var(--input-border);border-radius:.4rem;font-size:1rem;background:var(--card);color:var(--text)}
button{display:flex;align-items:center;justify-content:center;gap:.6rem;width:100%;margin-top:.6rem;padding:.7rem;border:1px solid var(--border);border-radius:.4rem;font-size:1rem;cursor:pointer;background:var(--provider-bg,var(--card));color:var(--provider-color,var(--text))}
button.accent{background:var(--brand);color:var(--brand-text);border-color:transparent}
button:focus-visible,input:focus-visible,a:focus-visible{outline:3px solid #2563eb;outline-offset:2px}
.error{background:var(--error-bg);color:var(--error-text);border:1px solid var(--error-border);padding:.75rem;border-radius:.4rem;margin-bottom:1rem}
.divider{border:0;border-top:1px solid var(--rule);margin:1.25rem 0}
.hint{font-size:.9rem;text-align:center;margin:.5rem 0 0}
.error:empty{display:none}
.logo{display:block;max-height:3rem;margin:0 auto 1rem}
</style></head>{{end}}

{{define "alert"}}{{if .Error}}<div class="error" role="alert"><p>{{.Message}}</p></div>{{end}}{{end}}

{{define "hidden"}}<input type="hidden" name="csrfToken" value="{{.CSRFToken}}"><input type="hidden" name="callbackUrl" value="{{.CallbackURL}}">{{end}}

{{define "newpassword"}}<label for="password">{{.}}</label>
<input id="password" type="password" name="password" autocomplete="new-password" required>{{end}}

{{define "lengths"}}{{with .Password}}<p class="hint">{{.MinLength}} to {{.MaxLength}} characters; a few words you remember make a good one.</p>{{end}}{{end}}

{{define "brand"}}<body style="--brand:{{.BrandColor}};--brand-text:{{.ButtonText}}"><main>{{if .Logo}}<img class="logo" src="{{.Logo}}" alt="">{{end}}{{end}}

{{define "signin"}}{{template "head" (or .Title "Sign In")}}
{{template "brand" .}}
<h1>{{if .Register}}Create a passkey{{else}}Sign in{{end}}</h1>
{{template "alert" .}}
{{$d := .}}{{range $i, $p := .Providers}}{{if $i}}<hr class="divider">{{end}}
{{if or (eq $p.Type "oauth") (eq $p.Type "oidc")}}<form action="{{$p.SignInURL}}" method="post">
<input type="hidden" name="csrfToken" value="{{$d.CSRFToken}}"><input type="hidden" name="callbackUrl" value="{{$d.CallbackURL}}">
<button type="submit" class="provider" data-provider="{{$p.ID}}"{{if $p.Style}} style="{{$p.Style}}"{{end}}>{{if $p.Logo}}<img src="{{$p.Logo}}" alt="" width="24" height="24">{{end}}<span>Sign in with {{$p.Name}}</span></button>
</form>{{end}}
{{if eq $p.Type "email"}}<form action="{{if $p.CodeURL}}{{$p.CodeURL}}{{else}}{{$p.SignInURL}}{{end}}" method="post">
<input type="hidden" name="csrfToken" value="{{$d.CSRFToken}}"><input type="hidden" name="callbackUrl" value="{{$d.CallbackURL}}">
<label for="input-email-for-{{$p.ID}}">Email</label>
<input id="input-email-for-{{$p.ID}}" type="email" name="email" autocomplete="email" placeholder="email@example.com" required>
<button type="submit" class="accent">Sign in with {{$p.Name}}</button>
</form>{{end}}
{{if eq $p.Type "credentials"}}<form action="{{$p.CallbackURL}}" method="post">
<input type="hidden" name="csrfToken" value="{{$d.CSRFToken}}"><input type="hidden" name="callbackUrl" value="{{$d.CallbackURL}}">
{{range $p.Fields}}<label for="input-{{.Name}}-for-{{$p.ID}}">{{if .Label}}{{.Label}}{{else}}{{.Name}}{{end}}</label>
<input id="input-{{.Name}}-for-{{$p.ID}}" name="{{.Name}}" type="{{if .Type}}{{.Type}}{{else}}text{{end}}"{{if .Placeholder}} placeholder="{{.Placeholder}}"{{end}}>
{{end}}<button type="submit" class="accent">Sign in with {{$p.Name}}</button>
</form>{{end}}
{{if and (eq $p.Type "password") $d.Password}}<form action="{{$p.CallbackURL}}" method="post" data-authport-password>
<input type="hidden" name="csrfToken" value="{{$d.CSRFToken}}"><input type="hidden" name="callbackUrl" value="{{$d.CallbackURL}}">
{{if $d.Password.Usernames}}<label for="input-username-for-{{$p.ID}}">Email or username</label>
<input id="input-username-for-{{$p.ID}}" type="text" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required>
{{else}}<label for="input-email-for-{{$p.ID}}">Email</label>
<input id="input-email-for-{{$p.ID}}" type="email" name="email" autocomplete="username" placeholder="email@example.com" required>
{{end}}<label for="input-password-for-{{$p.ID}}">Password</label>
<input id="input-password-for-{{$p.ID}}" type="password" name="password" autocomplete="current-password" required>
<button type="submit" class="accent">Sign in with {{$p.Name}}</button>
</form>
<p class="hint"><a href="{{$d.Password.ForgotURL}}">Forgot your password?</a> · <a href="{{$d.Password.SignUpURL}}">Create an account</a></p>{{end}}
{{if eq $p.Type "webauthn"}}<form class="passkey" method="post" action="{{$p.CallbackURL}}" data-authport-passkey data-options-url="{{$p.OptionsURL}}">
<input type="hidden" name="csrfToken" value="{{$d.CSRFToken}}"><input type="hidden" name="callbackUrl" value="{{$d.CallbackURL}}">
<input type="hidden" name="action" value=""><input type="hidden" name="data" value="">
{{if $d.Register}}<p>Create a passkey on this device for your account. Next time you sign in with it: no password, no e-mail link.</p>
<label for="input-passkey-email-for-{{$p.ID}}">Email</label>
<input id="input-passkey-email-for-{{$p.ID}}" name="email" type="email" autocomplete="username webauthn" required{{if $d.RegisterEmail}} value="{{$d.RegisterEmail}}" readonly{{end}}>
<p class="error" data-authport-passkey-error role="alert"></p>
<button type="submit" class="accent">Create passkey</button>
</form>
<p class="hint"><a href="{{$p.SignInURL}}">Sign in with an existing passkey</a></p>{{else}}<label for="input-passkey-email-for-{{$p.ID}}">Email (to register a new passkey)</label>
<input id="input-passkey-email-for-{{$p.ID}}" name="email" type="email" autocomplete="username webauthn">
<button type="submit" class="accent">Sign in with Passkey</button>
</form>
<p class="hint"><a href="{{$p.SignInURL}}?action=register">Create a passkey</a></p>{{end}}{{end}}
{{end}}
{{if .HasPasskey}}<script src="{{.Base}}/passkey.js" defer></script>{{end}}
</main></body></html>{{end}}

{{define "signout"}}{{template "head" "Sign Out"}}
{{template "brand" .}}
<h1>Sign out</h1>
<p>Are you sure you want to sign out?</p>
<form action="{{.Base}}/signout" method="post">
<input type="hidden" name="csrfToken" value="{{.CSRFToken}}"><input type="hidden" name="callbackUrl" value="{{.CallbackURL}}">
<button type="submit" class="accent">Sign out</button>
</form>
</main></body></html>{{end}}

{{define "verify"}}{{template "head" "Verify Request"}}
{{template "brand" .}}
<h1>Check your email</h1>
{{template "alert" .}}
{{if eq .Kind "verify-email"}}<p>We sent an e-mail to confirm your address{{with .Email}} ({{.}}){{end}}. Open its link{{if .CodeURL}}, or enter the code it holds here{{end}}.</p>
{{else if eq .Kind "reset-password"}}<p>If {{with .Email}}{{.}}{{else}}this address{{end}} belongs to an account with a password, we sent it an e-mail to reset the password. Open its link{{if .CodeURL}}, or enter its code and a new password here{{end}}.</p>
{{else}}<p>A sign in link has been sent to your email address.{{if .CodeURL}} Open it, or enter the code it holds here.{{end}}</p>
{{end}}{{if .CodeURL}}<form action="{{.CodeURL}}" method="post" data-authport-code>
{{template "hidden" .}}
<label for="code-email">Email</label>
<input id="code-email" type="email" name="email" autocomplete="email" value="{{.Email}}" required>
{{if eq .Kind "verify-email"}}{{with .VerifyUsername}}<input type="hidden" name="username" value="{{.}}">{{end}}{{end}}
<label for="code">Code</label>
<input id="code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="12" required>
{{if eq .Kind "reset-password"}}{{template "newpassword" "New password"}}
{{template "lengths" .}}
<button type="submit" class="accent">Reset password</button>{{else}}<button type="submit" class="accent">Continue</button>{{end}}
</form>
{{end}}<p><a href="{{.Home}}">{{.Host}}</a></p>
</main></body></html>{{end}}

{{define "reset"}}{{template "head" "Reset Password"}}
{{template "brand" .}}
<h1>Choose a new password</h1>
{{template "alert" .}}
{{if eq .Error "Verification"}}<p class="hint"><a href="{{.Base}}/password/forgot">Ask for a new link</a></p>
{{else}}<form action="{{.Base}}/password/reset" method="post">
<input type="hidden" name="csrfToken" value="{{.CSRFToken}}"><input type="hidden" name="email" value="{{.LinkEmail}}"><input type="hidden" name="token" value="{{.LinkToken}}">
{{template "newpassword" "New password"}}
{{template "lengths" .}}
<button type="submit" class="accent">Reset password</button>
</form>
{{end}}</main></body></html>{{end}}

{{define "confirm"}}{{template "head" "Confirm Your Email"}}
{{template "brand" .}}
<h1>Confirm your e-mail address</h1>
{{template "alert" .}}
<p>Confirm {{with .LinkEmail}}{{.}}{{else}}your address{{end}} to finish creating your account and sign in.{{if .HasBinding}} If you created the account in another browser, enter its password.{{else}} Enter the password you chose for it.{{end}}</p>
<p class="hint">If you did not create an account, close this page: nothing happens without the password.</p>
<form action="{{.Base}}/password/verify" method="post" data-authport-confirm>
{{template "hidden" .}}<input type="hidden" name="email" value="{{.LinkEmail}}"><input type="hidden" name="token" value="{{.LinkToken}}">{{with .VerifyUsername}}<input type="hidden" name="username" value="{{.}}">{{end}}
<label for="password">Password{{if .HasBinding}} (not needed in the browser you signed up in){{end}}</label>
<input id="password" type="password" name="password" autocomplete="current-password"{{if not .HasBinding}} required{{end}}>
<button type="submit" class="accent">Confirm and sign in</button>
</form>
</main></body></html>{{end}}

{{define "signup"}}{{template "head" .Title}}
{{template "brand" .}}
<h1>Create an account</h1>
{{template "alert" .}}
<form action="{{.Base}}/password/signup" method="post" data-authport-signup>
{{template "hidden" .}}
<label for="email">Email{{if .Password.Usernames}} (optional with a username){{end}}</label>
<input id="email" type="email" name="email" autocomplete="email" placeholder="email@example.com"{{if not .Password.Usernames}} required{{end}}>
{{if .Password.Usernames}}<label for="username">Username (optional with an e-mail address)</label>
<input id="username" type="text" name="username" autocomplete="username" autocapitalize="none" spellcheck="false">
{{end}}<label for="name">Name (optional)</label>
<input id="name" type="text" name="name" autocomplete="name">
{{template "newpassword" "Password"}}
{{template "lengths" .}}
<button type="submit" class="accent">Create account</button>
</form>
<p class="hint">Have an account? <a href="{{.Base}}/signin">Sign in</a></p>
</main></body></html>{{end}}

{{define "forgot"}}{{template "head" .Title}}
{{template "brand" .}}
<h1>Reset your password</h1>
{{template "alert" .}}
<p>Enter your account's e-mail address: if the account has a password, we send it a link{{if .Password.Codes}} and a code{{end}} to choose a new one.</p>
<form action="{{.Base}}/password/forgot" method="post" data-authport-forgot>
{{template "hidden" .}}
<label for="email">Email</label>
<input id="email" type="email" name="email" autocomplete="email" placeholder="email@example.com" required>
<button type="submit" class="accent">Send reset e-mail</button>
</form>
<p class="hint"><a href="{{.Base}}/signin">Back to sign in</a></p>
</main></body></html>{{end}}

{{define "change"}}{{template "head" .Title}}
{{template "brand" .}}
<h1>{{.Title}}</h1>
{{template "alert" .}}
<form action="{{.Base}}/password/{{if .HasPassword}}change{{else}}set{{end}}" method="post" data-authport-change>
{{template "hidden" .}}
{{if .HasPassword}}<label for="current-password">Current password</label>
<input id="current-password" type="password" name="currentPassword" autocomplete="current-password" required>
{{end}}{{template "newpassword" "New password"}}
{{template "lengths" .}}
<button type="submit" class="accent">{{if .HasPassword}}Change password{{else}}Set password{{end}}</button>
</form>
{{if .HasPassword}}<p class="hint">Your other sessions end when the password changes.</p>{{end}}
<p><a href="{{.CallbackURL}}">Back</a></p>
</main></body></html>{{end}}

{{define "error"}}{{template "head" "Error"}}
{{template "brand" .}}
<h1>{{if .Heading}}{{.Heading}}{{else}}Error{{end}}</h1>
<div role="alert"><p>{{if .Message}}{{.Message}}{{else}}Unable to sign in.{{end}}</p></div>
<p><a href="{{.Base}}/signin">Sign in</a> · <a href="{{.Home}}">{{.Host}}</a></p>
</main></body></html>{{end}}
`
