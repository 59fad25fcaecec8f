//go:build authport_consumer

package main

import (
	"github.com/authport/authport/adapters/memory"
	"github.com/authport/authport/core/auth"
)

// memoryAuth is core/auth as an application at https://app.example.com
// configures it, on the memory adapter (for the modules whose check needs
// an *auth.Auth but no database): cfg gives the rest.
func memoryAuth(cfg auth.Config) (*auth.Auth, error) {
	cfg.Adapter = memory.New()
	cfg.Secrets = []string{"consumer-check-secret-0123456789abcdef"}
	cfg.BaseURL = "https://app.example.com/auth"
	return auth.New(cfg)
}
