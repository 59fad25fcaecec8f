module github.com/authport/authport/examples/quickstart

go 1.26.0

require (
	github.com/authport/authport/adapters/bbolt v0.1.0
	github.com/authport/authport/core v0.1.0
	github.com/authport/authport/handler v0.1.0
	github.com/go-chi/chi/v5 v5.2.3
)

require (
	github.com/authport/authport/jwt v0.1.0 // indirect
	github.com/authport/authport/oauth v0.1.0 // indirect
	github.com/authport/authport/tokens v0.1.0 // indirect
	github.com/coreos/go-oidc/v3 v3.21.0 // indirect
	github.com/go-jose/go-jose/v4 v4.1.9 // indirect
	go.etcd.io/bbolt v1.5.0 // indirect
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/oauth2 v0.36.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace (
	github.com/authport/authport/adapters/bbolt => ../../adapters/bbolt
	github.com/authport/authport/adapters/memory => ../../adapters/memory
	github.com/authport/authport/conformance => ../../conformance
	github.com/authport/authport/core => ../../core
	github.com/authport/authport/handler => ../../handler
	github.com/authport/authport/jwt => ../../jwt
	github.com/authport/authport/mail => ../../mail
	github.com/authport/authport/oauth => ../../oauth
	github.com/authport/authport/tokens => ../../tokens
)
