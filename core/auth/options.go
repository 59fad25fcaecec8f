package auth

import "github.com/authport/authport/core/provider"

// Providers returns the configured providers in configuration order, as
// [New] validated them (defaults applied), for the HTTP layer that lists
// them and renders the sign-in page. The slice is a copy; the providers in
// it are shared and must not be changed.
func (a *Auth) Providers() []provider.Provider {
	return append([]provider.Provider(nil), a.list...)
}
