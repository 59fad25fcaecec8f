module github.com/authport/authport/handler

go 1.26

require (
	github.com/authport/authport/adapters/memory v0.1.0
	github.com/authport/authport/core v0.1.0
	github.com/authport/authport/jwt v0.1.0
	github.com/authport/authport/oauth v0.1.0
)

require (
	github.com/coreos/go-oidc/v3 v3.21.0 // indirect
	github.com/go-jose/go-jose/v4 v4.1.9 // indirect
	golang.org/x/oauth2 v0.36.0 // indirect
)

replace (
	github.com/authport/authport/adapters/memory => ../adapters/memory
	github.com/authport/authport/conformance => ../conformance
	github.com/authport/authport/core => ../core
	github.com/authport/authport/jwt => ../jwt
	github.com/authport/authport/mail => ../mail
	github.com/authport/authport/oauth => ../oauth
)
