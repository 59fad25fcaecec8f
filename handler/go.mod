module github.com/authport/authport/handler

go 1.26.0

require (
	github.com/authport/authport/adapters/memory v0.1.0
	github.com/authport/authport/core v0.1.0
	github.com/authport/authport/jwt v0.1.0
	github.com/authport/authport/mail v0.1.0
	github.com/authport/authport/oauth v0.1.0
	github.com/authport/authport/tokens v0.1.0
	github.com/go-jose/go-jose/v4 v4.1.9
)

require (
	github.com/coreos/go-oidc/v3 v3.21.0 // indirect
	github.com/emersion/go-sasl v0.0.0-20241020182733-b788ff22d5a6 // indirect
	github.com/emersion/go-smtp v0.25.1 // indirect
	github.com/wneessen/go-mail v0.8.1 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/oauth2 v0.36.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace (
	github.com/authport/authport/adapters/memory => ../adapters/memory
	github.com/authport/authport/conformance => ../conformance
	github.com/authport/authport/core => ../core
	github.com/authport/authport/jwt => ../jwt
	github.com/authport/authport/mail => ../mail
	github.com/authport/authport/oauth => ../oauth
	github.com/authport/authport/tokens => ../tokens
)
