package handler

import (
	"html/template"
	"net/http"
	"slices"

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
}

// Has reports whether the page offers (or the user has) the factor type.
func (f *factorPage) Has(t string) bool {
	return f != nil && slices.Contains(f.Types, core.FactorType(t))
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
	d.Factor = &factorPage{}
	d.HasPasskey = false
	return d
}

const factorPagesSource = `
{{define "codeinput"}}<label for="code">{{.}}</label>
<input id="code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="32" required>{{end}}

{{define "trust"}}{{if .Factor.Trust}}<p><label><input type="checkbox" name="trustDevice" value="1"> Trust this browser: skip this step here for a while</label></p>{{end}}{{end}}

{{define "passkeyfactor"}}{{if .Factor.PasskeyURL}}<form method="post" action="{{.Factor.PasskeyURL}}" data-authport-passkey data-options-url="{{.Factor.PasskeyOptionsURL}}">
{{template "hidden" .}}<input type="hidden" name="action" value=""><input type="hidden" name="data" value="">
{{template "trust" .}}<p class="error" data-authport-passkey-error role="alert"></p>
<button type="submit">Use a passkey</button>
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
{{else}}{{if .Factor.Sent}}<p role="status">We sent a code to your e-mail address.</p>{{end}}
{{if or (.Factor.Has "totp") (.Factor.Has "email")}}<form action="{{.Factor.Action}}" method="post" data-authport-factor>
{{template "hidden" .}}<input type="hidden" name="type" value="{{if .Factor.Has "totp"}}totp{{else}}email{{end}}">
{{template "codeinput" (or (and (.Factor.Has "totp") "Code from your authenticator app") "Code from the e-mail")}}
{{template "trust" .}}<button type="submit" class="accent">Verify</button>
</form>{{end}}
{{if and (.Factor.Has "totp") (.Factor.Has "email")}}<form action="{{.Factor.Action}}" method="post" data-authport-email-factor>
{{template "hidden" .}}<input type="hidden" name="type" value="email">
<label for="email-code">Code from the e-mail</label>
<input id="email-code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="32" required>
{{template "trust" .}}<button type="submit">Verify the e-mail code</button>
</form>{{end}}
{{if .Factor.Has "email"}}<form action="{{.Factor.EmailURL}}" method="post" data-authport-send-code>
{{template "hidden" .}}<button type="submit">Send me a code by e-mail</button>
</form>{{end}}
{{template "passkeyfactor" .}}
{{if .Factor.Has "recovery"}}<hr class="divider"><details><summary>Use a recovery code</summary>
<form action="{{.Factor.Action}}" method="post" data-authport-recovery>
{{template "hidden" .}}<input type="hidden" name="type" value="recovery">
<label for="recovery-code">Recovery code</label>
<input id="recovery-code" type="text" name="code" autocomplete="off" autocapitalize="none" spellcheck="false" maxlength="32" required>
{{template "trust" .}}<button type="submit">Use the recovery code</button>
</form></details>{{end}}{{end}}
<p class="hint"><a href="{{.Base}}/signin">Start over</a></p>
{{if .Factor.PasskeyURL}}<script src="{{.Base}}/passkey.js" defer></script>{{end}}
</main></body></html>{{end}}

{{define "totpenroll"}}{{template "head" .Title}}
{{template "brand" .}}
<h1>Set up an authenticator app</h1>
{{template "alert" .}}
{{with .Factor.Enrollment}}<p>Scan this QR code with your authenticator app, or type the key into it, then enter the code it shows.</p>
{{if .QRCode}}<img src="{{.QRCode}}" alt="QR code of the key" width="200" height="200" style="display:block;margin:0 auto;background:#fff;padding:.5rem">{{end}}
<p><label for="totp-key">Key</label><input id="totp-key" type="text" value="{{.Text}}" readonly></p>{{end}}
<form action="{{.Factor.Action}}" method="post" data-authport-totp-confirm>
{{template "hidden" .}}<input type="hidden" name="type" value="totp"><input type="hidden" name="enrollment" value="{{.Factor.Enrollment.Token}}">
{{template "codeinput" "Code from the app"}}
{{template "trust" .}}<button type="submit" class="accent">Confirm</button>
</form>
</main></body></html>{{end}}

{{define "recoverycodes"}}{{template "head" .Title}}
{{template "brand" .}}
<h1>{{.Title}}</h1>
{{if .Factor.RecoveryCodes}}<p>Keep these recovery codes somewhere safe: each signs you in once if you lose your authenticator. They are shown only now.</p>
<ul data-authport-recovery-codes style="font-family:ui-monospace,monospace;font-size:1.1rem">{{range .Factor.RecoveryCodes}}<li>{{.}}</li>{{end}}</ul>
{{else}}<p>Your recovery codes stay as they were.</p>{{end}}
{{with .Factor.Next}}<p><a href="{{.}}" data-authport-continue>Continue</a></p>{{else}}<p><a href="{{.Base}}/account/security">Back to sign-in security</a></p>{{end}}
</main></body></html>{{end}}

{{define "security"}}{{template "head" .Title}}
{{template "brand" .}}
<h1>Sign-in security</h1>
{{template "alert" .}}{{with .Factor.Done}}<p role="status">{{.}}</p>{{end}}
{{$d := .}}<h2>Your second factors</h2>
{{if .Factor.Factors}}<ul data-authport-factors>{{range .Factor.Factors}}<li>{{.Type}}{{with .Name}}: {{.}}{{end}}{{if eq .Type "recovery"}} ({{.Remaining}} left){{end}}
<form action="{{$d.Base}}/two-factor/remove" method="post">{{template "hidden" $d}}<input type="hidden" name="id" value="{{.ID}}"><button type="submit">Remove</button></form></li>{{end}}</ul>
{{else}}<p>None yet: your sign-in takes one step.</p>{{end}}
<hr class="divider">
<form action="{{.Base}}/two-factor/totp/start" method="post" data-authport-totp-start>
{{template "hidden" .}}<label for="totp-name">Name of the authenticator (optional)</label>
<input id="totp-name" type="text" name="name" maxlength="64">
<button type="submit" class="accent">Add an authenticator app</button>
</form>
<form action="{{.Base}}/two-factor/recovery-codes" method="post" data-authport-recovery-new>
{{template "hidden" .}}<button type="submit">New recovery codes</button>
</form>
{{if and .Factor.CanEmail (not (.Factor.Has "email"))}}<form action="{{.Base}}/two-factor/email/add" method="post" data-authport-email-add>
{{template "hidden" .}}<button type="submit">Add e-mail codes</button>
</form>{{end}}
{{range .Factor.Passkeys}}<form action="{{$d.Base}}/two-factor/passkey/add" method="post" data-authport-passkey-add>
{{template "hidden" $d}}<input type="hidden" name="credentialId" value="{{.}}"><button type="submit">Make passkey {{.}} a second factor</button>
</form>{{end}}
{{if .Factor.Has "device"}}<form action="{{.Base}}/two-factor/devices/revoke" method="post" data-authport-devices-revoke>
{{template "hidden" .}}<button type="submit">Forget every trusted browser</button>
</form>{{end}}
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
<input id="reauth-email-code" type="text" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="32" required>
<button type="submit">Continue with the e-mail code</button>
</form>
<form action="{{.Factor.EmailURL}}" method="post" data-authport-send-code>{{template "hidden" .}}<button type="submit">Send me a code by e-mail</button></form>{{end}}
{{template "passkeyfactor" .}}
{{if not (or .HasPassword (.Factor.Has "totp") (.Factor.Has "email") .Factor.PasskeyURL)}}<p>Sign out and sign in again to go on.</p>
<p><a href="{{.Base}}/signout">Sign out</a></p>{{end}}
{{if .Factor.PasskeyURL}}<script src="{{.Base}}/passkey.js" defer></script>{{end}}
</main></body></html>{{end}}
`
