module github.com/authport/authport/tests/tokeninterop

go 1.26.0

require (
	github.com/authport/authport/adapters/memory v0.1.0
	github.com/authport/authport/core v0.1.0
	github.com/authport/authport/handler v0.1.0
	github.com/authport/authport/tokens v0.1.0
	github.com/lestrrat-go/jwx/v3 v3.4.0
)

require (
	github.com/authport/authport/jwt v0.1.0 // indirect
	github.com/authport/authport/oauth v0.1.0 // indirect
	github.com/coreos/go-oidc/v3 v3.21.0 // indirect
	github.com/decred/dcrd/dcrec/secp256k1/v4 v4.4.1 // indirect
	github.com/go-jose/go-jose/v4 v4.1.9 // indirect
	github.com/goccy/go-json v0.11.2 // indirect
	github.com/lestrrat-go/blackmagic v1.0.4 // indirect
	github.com/lestrrat-go/dsig v1.4.0 // indirect
	github.com/lestrrat-go/dsig-secp256k1 v1.0.0 // indirect
	github.com/lestrrat-go/httpcc v1.0.1 // indirect
	github.com/lestrrat-go/httprc/v3 v3.0.6 // indirect
	github.com/lestrrat-go/option/v2 v2.0.0 // indirect
	github.com/segmentio/asm v1.2.1 // indirect
	github.com/valyala/fastjson v1.6.10 // indirect
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/oauth2 v0.36.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace (
	github.com/authport/authport/adapters/memory => ../../adapters/memory
	github.com/authport/authport/conformance => ../../conformance
	github.com/authport/authport/core => ../../core
	github.com/authport/authport/handler => ../../handler
	github.com/authport/authport/jwt => ../../jwt
	github.com/authport/authport/mail => ../../mail
	github.com/authport/authport/oauth => ../../oauth
	github.com/authport/authport/tokens => ../../tokens
)
