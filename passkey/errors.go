package passkey

import "github.com/authport/authport/core/auth"

// refuse reports a failed check: detail wraps one of the checks of package
// refusal (which documents each). A refusal is returned as
// auth.Fail(auth.CodeWebAuthnVerification, …); an error that already
// carries a code (core/auth's) keeps it.
func refuse(detail error) error {
	return auth.Fail(auth.CodeWebAuthnVerification, detail)
}
