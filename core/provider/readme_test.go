package provider

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeTable checks README.md's tables against BuiltIns: every
// built-in has one row, and an identity provider's row states its type,
// checks, default scope and client authentication as configured.
func TestReadmeTable(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		id := strings.Trim(cells[0], "`")
		if _, dup := rows[id]; dup {
			t.Errorf("README lists %s twice", id)
		}
		rows[id] = cells
	}
	r := BuiltIns()
	for _, id := range r.IDs() {
		cells, ok := rows[id]
		if !ok {
			t.Errorf("README has no row for built-in %s", id)
			continue
		}
		delete(rows, id)
		p := r[id](UserConfig{ClientID: "c", ClientSecret: "s", Issuer: "https://idp.example.com", Tenant: "t1"})
		if _, ok := p.(OAuthProvider); !ok {
			continue // the e-mail and other tables have columns of their own
		}
		vs, err := Validate([]Provider{p})
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		o := vs[0].(OAuthProvider).Options()
		var checks []string
		for _, c := range o.Checks {
			checks = append(checks, string(c))
		}
		scope := "—"
		if s := o.Authorization.Params.Get("scope"); s != "" {
			scope = "`" + s + "`"
		} else if o.Type == TypeOIDC {
			scope = "`openid profile email`"
		}
		method := strings.TrimPrefix(o.Client.TokenEndpointAuthMethod, "client_secret_")
		if method == "" {
			method = "basic"
		}
		want := []string{string(o.Type), strings.Join(checks, ", "), scope, method}
		if got := cells[1:5]; strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("README row %s: %q, want %q", id, got, want)
		}
	}
	for id := range rows {
		t.Errorf("README lists %s, which is not a built-in", id)
	}
}
