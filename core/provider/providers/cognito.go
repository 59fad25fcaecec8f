package providers

import (
	"context"

	"github.com/authport/authport/core/provider"
)

// CognitoProfile is the claims of an Amazon Cognito ID token.
type CognitoProfile struct {
	StandardClaims
	Username string `json:"cognito:username,omitempty"`
}

// CognitoUser maps a Cognito profile: sub, email, name (else
// cognito:username), picture.
func CognitoUser(_ context.Context, p CognitoProfile, _ provider.TokenSet) (provider.User, error) {
	return p.user(p.name(), p.Username), nil
}

// Cognito returns the Amazon Cognito OpenID Connect provider (id
// "cognito"). issuer is the user pool's issuer,
// https://cognito-idp.{region}.amazonaws.com/{userPoolId}.
func Cognito(clientID, clientSecret, issuer string) *provider.OIDCConfig[CognitoProfile] {
	return oidcBuiltIn("cognito", "Cognito", "#C17B9E", "", clientID, clientSecret, CognitoUser, issuerURL(issuer))
}
