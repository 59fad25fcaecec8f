package passkey

import (
	_ "embed"
	"slices"
)

//go:embed passkey.js
var script []byte

// Script returns the JavaScript the default sign-in page loads (the handler
// serves it at {base}/passkey.js). It runs the ceremony for every
// <form data-authport-passkey data-options-url="…"> on the page: it GETs
// the options URL (with the form's e-mail field, when filled in),
// converts the base64url values, calls navigator.credentials.create or
// .get, writes the credential JSON into the hidden "data" input and the
// action into "action", and submits the form. It has no dependencies and
// needs no inline script, so a strict Content-Security-Policy allows it.
// The returned slice is a copy.
func (p *Passkeys) Script() []byte { return slices.Clone(script) }
