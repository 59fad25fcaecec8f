module github.com/authport/authport/passkey

go 1.26.0

require (
	github.com/authport/authport/adapters/memory v0.1.0
	github.com/authport/authport/core v0.1.0
	github.com/go-webauthn/webauthn v0.18.2
)

require (
	github.com/fxamacker/cbor/v2 v2.9.4 // indirect
	github.com/go-viper/mapstructure/v2 v2.5.0 // indirect
	github.com/go-webauthn/x v0.3.1 // indirect
	github.com/golang-jwt/jwt/v5 v5.3.1 // indirect
	github.com/google/go-tpm v0.9.8 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/philhofer/fwd v1.2.0 // indirect
	github.com/tinylib/msgp v1.6.4 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/net v0.58.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace (
	github.com/authport/authport/adapters/memory => ../adapters/memory
	github.com/authport/authport/conformance => ../conformance
	github.com/authport/authport/core => ../core
)
