//go:build authport_consumer

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/authport/authport/jwt"
)

// check seals a session token as Auth.js does and opens it again.
func check(context.Context) (string, error) {
	codec, err := jwt.NewCodec("consumer-check-secret")
	if err != nil {
		return "", err
	}
	token, err := codec.Encode(jwt.SessionTokenCookie, map[string]any{"sub": "user-1"}, time.Hour)
	if err != nil {
		return "", err
	}
	claims, err := codec.Decode(jwt.SessionTokenCookie, token)
	if err != nil {
		return "", err
	}
	if claims["sub"] != "user-1" {
		return "", fmt.Errorf("decoded claims %v, want sub user-1", claims)
	}
	return fmt.Sprintf("encoded and decoded an Auth.js session token (%d bytes)", len(token)), nil
}
