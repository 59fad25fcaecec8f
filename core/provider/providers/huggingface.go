package providers

import "github.com/authport/authport/core/provider"

// HuggingfaceProfile is the claims of a Hugging Face ID token.
type HuggingfaceProfile struct {
	StandardClaims
	Profile  string `json:"profile,omitempty"`
	Website  string `json:"website,omitempty"`
	IsPro    bool   `json:"isPro,omitempty"`
	CanPay   bool   `json:"canPay,omitempty"`
	Username string `json:"username,omitempty"`
}

// Huggingface returns the Sign in with Hugging Face OpenID Connect
// provider (id "huggingface", issuer https://huggingface.co) with the
// pkce and state checks, asking for openid, profile and email.
func Huggingface(clientID, clientSecret string) *provider.OIDCConfig[HuggingfaceProfile] {
	c := oidcBuiltIn("huggingface", "Hugging Face", "#FFD21E", "pkce state", clientID, clientSecret, StandardClaimsUser[HuggingfaceProfile], "https://huggingface.co")
	c.Authorization = provider.Endpoint{Params: params("scope", "openid profile email")}
	return c
}
