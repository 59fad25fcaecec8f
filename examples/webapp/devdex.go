package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// The development OpenID provider: when OIDC_ISSUER is not set, the
// application starts the repository's dex (tools/dex) with two users, so
// that `go run .` signs in with nothing configured.

// devPassword is the password of the development users, and
// devPasswordHash its bcrypt hash (cost 10, the least dex accepts).
const (
	devPassword     = "password"
	devPasswordHash = "$2a$10$wWVcNZe4geSqgFvwfDu0v.K9gFJub.KEyJOTESzQDQ8SaBJ9VPH.G"
	devClientID     = "webapp"
)

// devUsers are the development dex's users: the first is made an admin
// when ADMINS is not set.
var devUsers = []string{"ada@example.com", "bob@example.com"}

// devDex is a running development dex.
type devDex struct {
	Issuer, ClientID, ClientSecret string
	stop                           func()
}

// Close stops dex.
func (d *devDex) Close() { d.stop() }

// startDevDex starts dex for an application whose auth routes are at
// baseURL. The binary is AUTHPORT_DEX_BIN's or the one scripts/services.sh
// builds from tools/dex (a few minutes the first time, cached after).
func startDevDex(ctx context.Context, baseURL string, logf func(string, ...any)) (*devDex, error) {
	bin, err := devDexBinary(ctx, logf)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	secret, err := randomSecret()
	if err != nil {
		return nil, err
	}
	d := &devDex{Issuer: "http://" + addr + "/dex", ClientID: devClientID, ClientSecret: secret}
	var passwords []map[string]string
	for _, email := range devUsers {
		name, _, _ := strings.Cut(email, "@")
		passwords = append(passwords, map[string]string{"email": email, "username": name, "userID": "dev-" + name, "hash": devPasswordHash})
	}
	conf, err := json.Marshal(map[string]any{
		"issuer":  d.Issuer,
		"storage": map[string]any{"type": "memory"},
		"web":     map[string]any{"http": addr},
		"oauth2":  map[string]any{"skipApprovalScreen": true},
		"logger":  map[string]any{"level": "info", "format": "text"},
		"staticClients": []map[string]any{{
			"id": d.ClientID, "secret": d.ClientSecret, "name": "webapp",
			"redirectURIs": []string{strings.TrimSuffix(baseURL, "/") + "/callback/" + providerID},
		}},
		"enablePasswordDB": true,
		"staticPasswords":  passwords,
	})
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "webapp-dex")
	if err != nil {
		return nil, err
	}
	confPath, logPath := filepath.Join(dir, "dex.yaml"), filepath.Join(dir, "dex.log")
	logFile, err := os.Create(logPath)
	if err == nil {
		err = os.WriteFile(confPath, conf, 0o600) // dex reads YAML, of which JSON is a subset
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "serve", confPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = devDexProcAttr()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting dex (%s): %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	d.stop = func() {
		cmd.Process.Kill()
		<-exited
		os.RemoveAll(dir)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(30 * time.Second); ; {
		if res, err := client.Get(d.Issuer + "/.well-known/openid-configuration"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return d, nil
			}
		}
		select {
		case <-exited:
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
			if time.Now().Before(deadline) {
				continue
			}
		}
		tail, _ := os.ReadFile(logPath)
		d.stop()
		return nil, fmt.Errorf("dex (%s) did not answer at %s; its log:\n%s", bin, d.Issuer, tail)
	}
}

// devDexBinary returns the dex binary AUTHPORT_DEX_BIN names, or builds
// one with the repository's scripts/services.sh (which caches it).
func devDexBinary(ctx context.Context, logf func(string, ...any)) (string, error) {
	if bin := os.Getenv("AUTHPORT_DEX_BIN"); bin != "" {
		return bin, nil
	}
	repo, err := findRepo()
	if err != nil {
		return "", err
	}
	logf("dex: scripts/services.sh builds it from %s (a few minutes the first time; cached after)", filepath.Join(repo, "tools", "dex"))
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(repo, "scripts", "services.sh"))
	cmd.Env = append(os.Environ(), "AUTHPORT_SERVICES=dex")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building dex with scripts/services.sh: %w", err)
	}
	if bin := exportedValue(out.String(), "AUTHPORT_DEX_BIN"); bin != "" {
		return bin, nil
	}
	return "", fmt.Errorf("scripts/services.sh printed no AUTHPORT_DEX_BIN:\n%s", out.String())
}

// exportedValue reads NAME's value from the `export NAME='value'` lines
// that scripts/services.sh prints.
func exportedValue(script, name string) string {
	for line := range strings.Lines(script) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "export "+name+"="); ok {
			v = strings.ReplaceAll(v, `'\''`, `'`)
			return strings.TrimSuffix(strings.TrimPrefix(v, "'"), "'")
		}
	}
	return ""
}

// errNoRepo says that the repository holding tools/dex was not found.
var errNoRepo = errors.New("the authport repository (with scripts/services.sh and tools/dex) is not in this directory or above it")

// findRepo returns the repository this program is run from (the working
// directory or one above it, as with `go run .` in examples/webapp), or
// whose source it was built from.
func findRepo() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for {
			if _, err := os.Stat(filepath.Join(dir, "tools", "dex", "go.mod")); err == nil {
				if _, err := os.Stat(filepath.Join(dir, "scripts", "services.sh")); err == nil {
					return dir, nil
				}
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errNoRepo
}
