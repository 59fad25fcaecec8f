package providers_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/authport/authport/core/provider"
	"github.com/authport/authport/core/provider/providers"
)

// An e-mail delivery service as an e-mail provider: Mailgun in its EU
// region. The HTTP client is injectable; here it is pointed at a local
// stand-in for Mailgun's API so the example runs without a Mailgun account.
func ExampleMailgun() {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, _, _ := r.BasicAuth()
		_ = r.ParseForm()
		fmt.Println(r.Method, r.Host, r.URL.Path, "user:", user)
		fmt.Println("to:", r.PostForm.Get("to"))
		fmt.Println("subject:", r.PostForm.Get("subject"))
		io.WriteString(w, `{"id":"<1@mg.example.com>","message":"Queued. Thank you."}`)
	}))
	defer api.Close()
	base, _ := url.Parse(api.URL)
	toStandIn := &http.Client{Transport: standIn{base}}

	mg := providers.Mailgun("key-from-mailgun", "mg.example.com", providers.MailgunEU,
		"Example <no-reply@example.com>", providers.WithEmailHTTPClient(toStandIn))
	fmt.Println(mg.ID, mg.Common().Type)

	// core/auth calls this with the link.
	err := mg.SendVerificationRequest(context.Background(), provider.VerificationRequest{
		Identifier: "user@example.com", From: mg.From,
		URL: "https://app.example.com/auth/callback/mailgun?email=user%40example.com&token=t0k3n",
	})
	fmt.Println("error:", err)
	// Output:
	// mailgun email
	// POST api.eu.mailgun.net /v3/mg.example.com/messages user: api
	// to: user@example.com
	// subject: Sign in to app.example.com
	// error: <nil>
}

// standIn sends every request to base, keeping its Host header.
type standIn struct{ base *url.URL }

func (s standIn) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = s.base.Scheme, s.base.Host
	return http.DefaultTransport.RoundTrip(r)
}

// The default sign-in e-mail: the link in a plain-text body and, escaped,
// in an HTML body.
func ExampleVerificationEmail() {
	m := provider.VerificationEmail(provider.VerificationRequest{
		URL: "https://app.example.com/auth/callback/resend?email=a%40b.example&token=t",
	})
	fmt.Println(m.Subject)
	fmt.Print(m.Text)
	fmt.Println(strings.Contains(m.HTML, `href="https://app.example.com/auth/callback/resend?email=a%40b.example&amp;token=t"`))
	// Output:
	// Sign in to app.example.com
	// Sign in to app.example.com
	// https://app.example.com/auth/callback/resend?email=a%40b.example&token=t
	//
	// If you did not request this e-mail you can safely ignore it.
	// true
}
