module github.com/authport/authport/totp

go 1.26.0

require (
	github.com/authport/authport/adapters/memory v0.1.0
	github.com/authport/authport/core v0.1.0
	github.com/pquerna/otp v1.5.0
)

require (
	github.com/boombuler/barcode v1.0.1-0.20190219062509-6c824513bacc // indirect
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
