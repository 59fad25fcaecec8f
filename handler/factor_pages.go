package handler

import (
	"encoding/base64"
	"html/template"
	"net/http"
	"slices"
	"strings"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/auth"
)

// The built-in pages of second factors and step-up (factors.go,
// stepup.go), built on the pages of pages.go (head, brand, alert):
//
//	twofactor      GET /two-factor: the challenge of a pending sign-in
//	totpenroll     a TOTP key to confirm: its QR code, its text, the code form
//	recoverycodes  recovery codes, shown once
//	security       GET /account/security: the user's factors and what changes them
//	reauth         GET /reauth: prove who you are again
//
// Each form posts to the route of its action; the passkey forms run the
// passkey script (passkey.js) like the sign-in page's.

// factorPage is what the second-factor pages show (pageData.Factor).
type factorPage struct {
	// Types are the factor types the user can answer with (challenge,
	// re-authentication) or has (security page).
	Types []core.FactorType
	// Enroll: the pending user must enrol TOTP to finish.
	Enroll bool
	// Trust offers "trust this browser".
	Trust bool
	// Sent: an e-mail code was sent.
	Sent bool
	// Action is where the code form posts; EmailURL where "send me a
	// code" posts; EnrollURL where the pending enrolment starts.
	Action, EmailURL, EnrollURL string
	// PasskeyOptionsURL and PasskeyURL run a passkey; "" when none is
	// offered.
	PasskeyOptionsURL, PasskeyURL string
	// Enrollment is a TOTP key to confirm.
	Enrollment *enrollmentPage
	// RecoveryCodes are codes to show once; Next, when set, is where the
	// page goes on to (the callbackUrl of the sign-in that made them).
	RecoveryCodes []string
	Next          string
	// Factors are the user's factors (security page); Passkeys the ids of
	// the user's passkeys, which can become factors; CanEmail that the user
	// has an address for e-mail codes; Done the notice of a change.
	Factors  []auth.FactorInfo
	Passkeys []string
	CanEmail bool
	Done     string
	// Site names the site in the recovery codes' file.
	Site string
}

// Has reports whether the page offers (or the user has) the factor type.
func (f *factorPage) Has(t string) bool {
	return f != nil && slices.Contains(f.Types, core.FactorType(t))
}

// Label names a factor type for people.
func (f *factorPage) Label(t core.FactorType) string {
	switch t {
	case core.FactorTOTP:
		return "Authenticator app"
	case core.FactorRecoveryCodes:
		return "Recovery codes"
	case core.FactorEmail:
		return "E-mail codes"
	case core.FactorPasskey:
		return "Passkey"
	case core.FactorTrustedDevice:
		return "Trusted browser"
	}
	return string(t)
}

// Short shortens a passkey's credential id for a button (its first
// twelve characters).
func (f *factorPage) Short(id string) string {
	if r := []rune(id); len(r) > 12 {
		return string(r[:12]) + "…"
	}
	return id
}

// Listed are the factors the security page lists as factors (trusted
// browsers apart), and Devices the trusted browsers.
func (f *factorPage) Listed() []auth.FactorInfo { return f.split(false) }

// Devices are the user's trusted browsers (see Listed).
func (f *factorPage) Devices() []auth.FactorInfo { return f.split(true) }

func (f *factorPage) split(devices bool) []auth.FactorInfo {
	if f == nil {
		return nil
	}
	var out []auth.FactorInfo
	for _, fi := range f.Factors {
		if (fi.Type == core.FactorTrustedDevice) == devices {
			out = append(out, fi)
		}
	}
	return out
}

// RecoveryDownload is a data: URL of a text file of the recovery codes,
// for the recovery-code page's download link ("" without codes).
func (f *factorPage) RecoveryDownload() template.URL {
	if f == nil || len(f.RecoveryCodes) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Recovery codes")
	if f.Site != "" {
		b.WriteString(" for " + f.Site)
	}
	b.WriteString("\r\nEach code signs you in once, in place of your second factor.\r\n\r\n")
	for _, c := range f.RecoveryCodes {
		b.WriteString(c + "\r\n")
	}
	return template.URL("data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte(b.String())))
}

// enrollmentPage is a TOTP key offered for enrolment.
type enrollmentPage struct {
	// QRCode is a data: URL of the PNG ("" when the TOTP gave none).
	QRCode template.URL
	// Text is the key to type; URI the otpauth:// URI.
	Text, URI string
	// Token carries the key, sealed, to the confirmation.
	Token string
}

// Link is URI as a link an authenticator app on this device opens, or
// "" when it is not an otpauth:// URI.
func (e *enrollmentPage) Link() template.URL {
	if e == nil || !strings.HasPrefix(e.URI, "otpauth://") || strings.ContainsAny(e.URI, "\"'<> \t\r\n\\") {
		return ""
	}
	return template.URL(e.URI)
}

// factorMessage is a second-factor page's message for a refusal code;
// false for a code the form pages word as usual.
func factorMessage(code string) (string, bool) {
	switch code {
	case ErrorSecondFactor:
		return "That code is not right, or was used already. Try again.", true
	case ErrorCredentialsSignin:
		return "That password is not right. Try again.", true
	case ErrorWebAuthnVerification:
		return "The passkey could not be verified. Try again.", true
	case ErrorBadRequest:
		return "That could not be done. Check what you entered; your last second factor cannot be removed while one is required.", true
	}
	return "", false
}

// factorPageData is formPageData for a second-factor page, with its
// refusal message.
func (h *Handler) factorPageData(w http.ResponseWriter, r *http.Request) pageData {
	d := h.formPageData(w, r)
	if m, ok := factorMessage(d.Error); ok {
		d.Message = m
	}
	d.Factor = &factorPage{Site: d.Host}
	d.HasPasskey = false
	return d
}

const factorPagesSource = `
{{define "codeinput"}}<label for="code">{{.}}</label>
<input id="code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="32" required autofocus>{{end}}

{{define "trust"}}{{if .Factor.Trust}}<p><label><input type="checkbox" name="trustDevice" value="1"> Trust this browser: skip this step here for a while</label></p>{{end}}{{end}}

{{define "passkeyfactor"}}{{if .Factor.PasskeyURL}}<form method="post" action="{{.Factor.PasskeyURL}}" data-authport-passkey data-options-url="{{.Factor.PasskeyOptionsURL}}">
{{template "hidden" .}}<input type="hidden" name="action" value=""><input type="hidden" name="data" value="">
{{template "trust" .}}<p class="error" data-authport-passkey-error role="alert"></p>
<button type="submit"{{if not (or (.Factor.Has "totp") (.Factor.Has "email") .HasPassword)}} class="accent"{{end}}>Use a passkey</button>
</form>{{end}}{{end}}

{{define "twofactor"}}{{template "head" .Title}}
{{template "brand" .}}
<h1>Two-step verification</h1>
{{template "alert" .}}
{{if .Factor.Enroll}}<p>This account needs a second step at sign-in. Set up an authenticator app to finish signing in.</p>
<form action="{{.Factor.EnrollURL}}" method="post" data-authport-enroll>
{{template "hidden" .}}
<button type="submit" class="accent">Set up an authenticator app</button>
</form>
{{else}}<p>Your password or sign-in link worked. Prove it's you with your second factor to finish signing in.</p>
{{if .Factor.Sent}}<p role="status">We sent a code to your e-mail address.</p>{{end}}
{{if or (.Factor.Has "totp") (.Factor.Has "email")}}<form action="{{.Factor.Action}}" method="post" data-authport-factor>
{{template "hidden" .}}<input type="hidden" name="type" value="{{if .Factor.Has "totp"}}totp{{else}}email{{end}}">
{{template "codeinput" (or (and (.Factor.Has "totp") "Code from your authenticator app") "Code from the e-mail")}}
{{template "trust" .}}<button type="submit" class="accent">Verify</button>
</form>{{end}}
{{if and (.Factor.Has "totp") (.Factor.Has "email")}}<form action="{{.Factor.Action}}" method="post" data-authport-email-factor>
{{template "hidden" .}}<input type="hidden" name="type" value="email">
<label for="email-code">Code from the e-mail</label>
<input id="email-code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="32" required>
{{template "trust" .}}<button type="submit">Verify the e-mail code</button>
</form>{{end}}
{{if .Factor.Has "email"}}<form action="{{.Factor.EmailURL}}" method="post" data-authport-send-code>
{{template "hidden" .}}<button type="submit">{{if .Factor.Sent}}Send another code{{else}}Send me a code by e-mail{{end}}</button>
</form>{{end}}
{{if .Factor.PasskeyURL}}{{if or (.Factor.Has "totp") (.Factor.Has "email")}}<hr class="divider">{{end}}{{template "passkeyfactor" .}}{{end}}
{{if .Factor.Has "recovery"}}<hr class="divider"><details><summary>Use a recovery code</summary>
<form action="{{.Factor.Action}}" method="post" data-authport-recovery>
{{template "hidden" .}}<input type="hidden" name="type" value="recovery">
<label for="recovery-code">Recovery code</label>
<input id="recovery-code" type="text" name="code" autocomplete="off" autocapitalize="none" spellcheck="false" maxlength="32" required>
<p class="hint">Each recovery code works once.</p>
{{template "trust" .}}<button type="submit">Use the recovery code</button>
</form></details>{{end}}{{end}}
<p class="hint"><a href="{{.Base}}/signin">Start over</a></p>
{{if .Factor.PasskeyURL}}<script src="{{.Base}}/passkey.js" defer></script>{{end}}
</main></body></html>{{end}}

{{define "totpenroll"}}{{template "head" .Title}}
{{template "brand" .}}
<h1>Set up an authenticator app</h1>
{{template "alert" .}}
{{with .Factor.Enrollment}}<ol style="padding-left:1.2rem">
<li>Scan this QR code with your authenticator app{{if .Link}} (or <a href="{{.Link}}">open it in an app on this device</a>){{end}}.</li>
<li>Or type the key below into the app.</li>
<li>Enter the six-digit code the app shows.</li>
</ol>
{{if .QRCode}}<img src="{{.QRCode}}" alt="QR code of the key, for an authenticator app" width="200" height="200" style="display:block;margin:0 auto;background:#fff;padding:.5rem;border-radius:.4rem" data-authport-totp-qr>{{end}}
<label for="totp-key">Key (select it to copy)</label>
<input id="totp-key" type="text" value="{{.Text}}" readonly autocomplete="off" autocapitalize="none" spellcheck="false" style="font-family:ui-monospace,monospace" data-authport-totp-key>
{{end}}<form action="{{.Factor.Action}}" method="post" data-authport-totp-confirm>
{{template "hidden" .}}<input type="hidden" name="type" value="totp"><input type="hidden" name="enrollment" value="{{with .Factor.Enrollment}}{{.Token}}{{end}}">
{{template "codeinput" "Code from the app"}}
{{template "trust" .}}<button type="submit" class="accent">Confirm</button>
</form>
<p class="hint">The app is added only once a code from it is confirmed.</p>
</main></body></html>{{end}}

{{define "recoverycodes"}}{{template "head" .Title}}
{{template "brand" .}}
<h1>{{.Title}}</h1>
{{if .Factor.RecoveryCodes}}<div class="error" role="alert"><p><strong>Save these recovery codes now.</strong> They are shown only this once.</p></div>
<p>Each code signs you in once if you lose your authenticator app or passkey. Keep them somewhere safe, such as a password manager.</p>
<ul data-authport-recovery-codes style="font-family:ui-monospace,monospace;font-size:1.1rem;columns:2;list-style:none;padding:0">{{range .Factor.RecoveryCodes}}<li>{{.}}</li>{{end}}</ul>
<label for="recovery-codes-text">The codes as text (select them to copy)</label>
<textarea id="recovery-codes-text" readonly rows="5" spellcheck="false" style="box-sizing:border-box;width:100%;font-family:ui-monospace,monospace;background:var(--card);color:var(--text);border:1px solid var(--input-border);border-radius:.4rem;padding:.5rem">{{range .Factor.RecoveryCodes}}{{.}}
{{end}}</textarea>
<p><a href="{{.Factor.RecoveryDownload}}" download="recovery-codes.txt" data-authport-recovery-download>Download the codes (recovery-codes.txt)</a></p>
{{else}}<p>Your recovery codes stay as they were.</p>{{end}}
{{with .Factor.Next}}<p><a href="{{.}}" data-authport-continue>I have saved them: continue</a></p>{{else}}<p><a href="{{$.Base}}/account/security">I have saved them: back to sign-in security</a></p>{{end}}
</main></body></html>{{end}}

{{define "security"}}{{template "head" .Title}}
{{template "brand" .}}
<h1>Sign-in security</h1>
{{template "alert" .}}{{with .Factor.Done}}<p role="status">{{.}}</p>{{end}}
{{$d := .}}<h2 style="font-size:1.1rem">Second factors</h2>
{{with .Factor.Listed}}<ul data-authport-factors style="list-style:none;padding:0">{{range .}}<li data-factor-type="{{.Type}}" style="border-top:1px solid var(--rule);padding:.5rem 0">
<strong>{{$d.Factor.Label .Type}}</strong>{{if and .Name (ne .Name ($d.Factor.Label .Type))}}: {{.Name}}{{end}}{{if eq .Type "recovery"}} ({{.Remaining}} left){{end}}<br>
<small>Added {{.CreatedAt.UTC.Format "2 Jan 2006"}} · last used {{if .LastUsedAt.IsZero}}never{{else}}{{.LastUsedAt.UTC.Format "2 Jan 2006 15:04 UTC"}}{{end}}</small>
<details><summary>Remove…</summary>
<form action="{{$d.Base}}/two-factor/remove" method="post" data-authport-remove>{{template "hidden" $d}}<input type="hidden" name="id" value="{{.ID}}">
<p>Remove {{$d.Factor.Label .Type}}{{if and .Name (ne .Name ($d.Factor.Label .Type))}} "{{.Name}}"{{end}}? You will no longer be able to sign in with it.</p>
<button type="submit">Remove {{$d.Factor.Label .Type}}</button></form></details></li>{{end}}</ul>
{{else}}<p>None yet: signing in takes one step. Add an authenticator app or a passkey to ask for a second one.</p>{{end}}
<hr class="divider">
<form action="{{.Base}}/two-factor/totp/start" method="post" data-authport-totp-start>
{{template "hidden" .}}<label for="totp-name">Name of the authenticator (optional)</label>
<input id="totp-name" type="text" name="name" maxlength="64" autocomplete="off">
<button type="submit" class="accent">Add an authenticator app</button>
</form>
{{range .Factor.Passkeys}}<form action="{{$d.Base}}/two-factor/passkey/add" method="post" data-authport-passkey-add>
{{template "hidden" $d}}<input type="hidden" name="credentialId" value="{{.}}"><button type="submit">Use passkey {{$d.Factor.Short .}} as a second factor</button>
</form>{{end}}
{{if and .Factor.CanEmail (not (.Factor.Has "email"))}}<form action="{{.Base}}/two-factor/email/add" method="post" data-authport-email-add>
{{template "hidden" .}}<button type="submit">Add codes by e-mail</button>
</form>{{end}}
{{if .Factor.Listed}}<details><summary>New recovery codes…</summary>
<form action="{{.Base}}/two-factor/recovery-codes" method="post" data-authport-recovery-new>
{{template "hidden" .}}<p>Make ten new recovery codes? Your current ones stop working.</p>
<button type="submit">Make new recovery codes</button>
</form></details>{{end}}
{{with .Factor.Devices}}<hr class="divider"><h2 style="font-size:1.1rem">Trusted browsers</h2>
<p>{{len .}} browser{{if gt (len .) 1}}s{{end}} skip{{if eq (len .) 1}}s{{end}} the second factor. Signing out everywhere forgets them too.</p>
<form action="{{$d.Base}}/two-factor/devices/revoke" method="post" data-authport-devices-revoke>
{{template "hidden" $d}}<button type="submit">Forget every trusted browser</button>
</form>{{end}}
<p class="hint">Changes ask you to confirm it's you when you signed in a while ago.</p>
</main></body></html>{{end}}

{{define "reauth"}}{{template "head" .Title}}
{{template "brand" .}}
<h1>Confirm it's you</h1>
{{template "alert" .}}{{if .Factor.Sent}}<p role="status">We sent a code to your e-mail address.</p>{{end}}
<p>This page needs a recent sign-in. Prove who you are again to go on.</p>
{{if .HasPassword}}<form action="{{.Factor.Action}}" method="post" data-authport-reauth-password>
{{template "hidden" .}}<label for="password">Password</label>
<input id="password" type="password" name="password" autocomplete="current-password" required>
{{if .Factor.Has "totp"}}<input type="hidden" name="type" value="totp">
<label for="reauth-password-code">Code from your authenticator app (needed for some pages)</label>
<input id="reauth-password-code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="32">{{end}}
<button type="submit" class="accent">Continue</button>
</form>{{end}}
{{if .Factor.Has "totp"}}<form action="{{.Factor.Action}}" method="post" data-authport-reauth-totp>
{{template "hidden" .}}<input type="hidden" name="type" value="totp">
{{template "codeinput" "Code from your authenticator app"}}
<button type="submit"{{if not .HasPassword}} class="accent"{{end}}>Continue with the code</button>
</form>{{end}}
{{if .Factor.Has "email"}}<form action="{{.Factor.Action}}" method="post" data-authport-reauth-email>
{{template "hidden" .}}<input type="hidden" name="type" value="email">
<label for="reauth-email-code">Code from the e-mail</label>
<input id="reauth-email-code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="32" required>
<button type="submit">Continue with the e-mail code</button>
</form>
<form action="{{.Factor.EmailURL}}" method="post" data-authport-send-code>{{template "hidden" .}}<button type="submit">Send me a code by e-mail</button></form>{{end}}
{{template "passkeyfactor" .}}
{{if not (or .HasPassword (.Factor.Has "totp") (.Factor.Has "email") .Factor.PasskeyURL)}}<p>Your account has no password or second factor to confirm here: sign in again to go on.</p>
<p><a href="{{.Base}}/signin?callbackUrl={{.CallbackURL}}" data-authport-signin-again>Sign in again</a> · <a href="{{.Base}}/signout">Sign out</a></p>{{end}}
{{if .Factor.PasskeyURL}}<script src="{{.Base}}/passkey.js" defer></script>{{end}}
</main></body></html>{{end}}
`
