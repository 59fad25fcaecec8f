package providers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/authport/authport/core/provider"
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
		if _, ok := p.(provider.OAuthProvider); !ok {
			continue // the e-mail and other tables have columns of their own
		}
		vs, err := provider.Validate([]provider.Provider{p})
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		o := vs[0].(provider.OAuthProvider).Options()
		var checks []string
		for _, c := range o.Checks {
			checks = append(checks, string(c))
		}
		scope := "—"
		if s := o.Authorization.Params.Get("scope"); s != "" {
			scope = "`" + s + "`"
		} else if o.Type == provider.TypeOIDC {
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

// The package doc (go doc) reaches every built-in identity provider: each
// OAuth/OIDC entry of BuiltIns has its constructor named as a doc link.
func TestPackageDocNamesEveryBuiltIn(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(doc), "//", "")), " ")
	n := 0
	for _, id := range BuiltIns().IDs() {
		p, _ := BuiltIns().New(id, UserConfig{ClientID: "x", Issuer: "https://idp.example.com", Tenant: "t"})
		if _, ok := p.(provider.OAuthProvider); !ok {
			continue
		}
		n++
		name := constructorName(t, id)
		if !strings.Contains(text, "["+name+"]") {
			t.Errorf("doc.go does not name [%s] (%s)", name, id)
		}
	}
	if n < 80 {
		t.Errorf("only %d OAuth/OIDC built-ins", n)
	}
}

// constructorName finds the constructor of id in its own file, named
// after the identifier ("microsoft-entra-id" in microsoft_entra_id.go):
// the exported function there that returns an OAuth 2.0 or OIDC
// configuration.
func constructorName(t *testing.T, id string) string {
	t.Helper()
	file := strings.ReplaceAll(id, "-", "_") + ".go"
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("built-in %q has no file of its own: %v", id, err)
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || !fd.Name.IsExported() || fd.Type.Results == nil {
			continue
		}
		star, ok := fd.Type.Results.List[0].Type.(*ast.StarExpr)
		if !ok {
			continue
		}
		if ix, ok := star.X.(*ast.IndexExpr); ok {
			if sel, ok := ix.X.(*ast.SelectorExpr); ok && (sel.Sel.Name == "OAuth2Config" || sel.Sel.Name == "OIDCConfig") {
				return fd.Name.Name
			}
		}
	}
	t.Fatalf("%s: no constructor of %q", file, id)
	return ""
}
