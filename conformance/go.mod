module github.com/authport/authport/conformance

go 1.26

require github.com/authport/authport/core v0.1.0

require golang.org/x/crypto v0.54.0

replace github.com/authport/authport/core => ../core
