package main

import (
	"html/template"
	"net/http"
	"time"

	"github.com/authport/authport/handler"
)

// page is what the demo's two pages show.
type page struct {
	Title    string
	Signed   bool
	Name     string
	Email    string
	Image    string
	Expires  string
	Store    string
	Base     string
	Protects bool // the protected page
	// Passwords links to the password pages (sign-up, change).
	Passwords bool
	// Factors links to the sign-in security page (second factors).
	Factors bool
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · authport demo</title>
<style>
body { font-family: system-ui, sans-serif; background: #f4f5f7; color: #1f2328; margin: 0; }
main { max-width: 36rem; margin: 4rem auto; background: #fff; border-radius: 12px; padding: 2rem 2.5rem; box-shadow: 0 1px 4px rgba(0,0,0,.12); }
h1 { font-size: 1.4rem; margin-top: 0; }
.who { display: flex; align-items: center; gap: 1rem; margin: 1.5rem 0; }
.who img { width: 48px; height: 48px; border-radius: 50%; }
.muted { color: #656d76; font-size: .9rem; }
nav { display: flex; gap: .75rem; flex-wrap: wrap; margin-top: 1.5rem; }
nav a { display: inline-block; padding: .55rem 1rem; border-radius: 8px; text-decoration: none; background: #1f6feb; color: #fff; }
nav a.secondary { background: #eaeef2; color: #1f2328; }
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
{{if .Signed}}
<div class="who">
{{if .Image}}<img src="{{.Image}}" alt="">{{end}}
<div><strong>Signed in as {{if .Name}}{{.Name}} &lt;{{.Email}}&gt;{{else}}{{.Email}}{{end}}</strong>
<div class="muted">session valid until {{.Expires}}</div></div>
</div>
{{if .Protects}}<p>Only signed-in users see this page: <code>h.Require</code> sent everyone else to the sign-in page.</p>{{end}}
<nav>
{{if .Protects}}<a class="secondary" href="/">Home</a>{{else}}<a class="secondary" href="/protected">Protected page</a>{{end}}
<a class="secondary" href="{{.Base}}/signin/passkey?action=register&amp;callbackUrl=%2F">Add a passkey</a>
{{if .Passwords}}<a class="secondary" href="{{.Base}}/password/change?callbackUrl=%2F">Password</a>{{end}}
{{if .Factors}}<a class="secondary" href="{{.Base}}/account/security?callbackUrl=%2F">Sign-in security</a>{{end}}
<a class="secondary" href="{{.Base}}/session">Session JSON</a>
<a href="{{.Base}}/signout?callbackUrl=%2F">Sign out</a>
</nav>
{{else}}
<p>Not signed in.</p>
<nav>
<a href="{{.Base}}/signin?callbackUrl=%2F">Sign in</a>
{{if .Passwords}}<a class="secondary" href="{{.Base}}/password/signup?callbackUrl=%2F">Create an account</a>{{end}}
<a class="secondary" href="/protected">Protected page</a>
</nav>
{{end}}
<p class="muted">Data: {{.Store}}</p>
</main>
</body>
</html>
`))

// render writes the page for the request's session (from the handler's
// middleware).
func (a *app) render(w http.ResponseWriter, r *http.Request, p page) {
	p.Store, p.Base, p.Passwords, p.Factors = a.store.desc, "/auth", a.passwords, a.factors
	if s, ok := handler.FromContext(r.Context()); ok && s != nil {
		p.Signed = true
		if s.User.Email != nil {
			p.Email = *s.User.Email
		}
		if s.User.Name != nil {
			p.Name = *s.User.Name
		}
		if s.User.Image != nil {
			p.Image = *s.User.Image
		}
		p.Expires = s.Expires.UTC().Format(time.RFC1123)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := pageTemplate.Execute(w, p); err != nil {
		http.Error(w, "page error", http.StatusInternalServerError)
	}
}

// home shows who is signed in, or a link to sign in.
func (a *app) home(w http.ResponseWriter, r *http.Request) {
	a.render(w, r, page{Title: "authport demo"})
}

// protected is behind Require: only signed-in users get here.
func (a *app) protected(w http.ResponseWriter, r *http.Request) {
	a.render(w, r, page{Title: "Protected page", Protects: true})
}
