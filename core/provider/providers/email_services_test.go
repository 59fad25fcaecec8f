package providers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/authport/authport/core"
	"github.com/authport/authport/core/provider"
)

// captured is one request an e-mail service double received.
type captured struct {
	Method, Host, Path string
	Header             http.Header
	Body               []byte
}

// serviceDouble is an httptest TLS server standing in for an e-mail
// service's API, and a client whose transport routes every host (the
// services' real hostnames) to it.
type serviceDouble struct {
	srv    *httptest.Server
	client *http.Client

	mu       sync.Mutex
	requests []captured
	status   int
	answer   string
}

func newServiceDouble(t *testing.T, status int, answer string) *serviceDouble {
	t.Helper()
	d := &serviceDouble{status: status, answer: answer}
	d.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		d.mu.Lock()
		d.requests = append(d.requests, captured{Method: r.Method, Host: r.Host, Path: r.URL.EscapedPath(), Header: r.Header.Clone(), Body: body})
		status, answer := d.status, d.answer
		d.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, answer)
	}))
	t.Cleanup(d.srv.Close)
	tr := d.srv.Client().Transport.(*http.Transport).Clone()
	addr := d.srv.Listener.Addr().String()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var dialer net.Dialer
		return dialer.DialContext(ctx, network, addr)
	}
	tr.TLSClientConfig.ServerName = "example.com" // the name httptest's certificate holds
	d.client = &http.Client{Transport: tr}
	return d
}

func (d *serviceDouble) captured() []captured {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]captured(nil), d.requests...)
}

const (
	testLink = "https://app.example.com/auth/callback/x?email=user%40example.com&token=0f1e2d3c4b5a"
	testTo   = "user@example.com"
	testFrom = "Acme <no-reply@acme.example>"
	testKey  = "sk_live_0123456789abcdef"
)

func testRequest(providerID string) provider.VerificationRequest {
	return provider.VerificationRequest{Identifier: testTo, URL: testLink, Token: "0f1e2d3c4b5a", Expires: time.Now().Add(time.Hour), From: testFrom, ProviderID: providerID}
}

// checkBodies checks that the plain-text body holds the link as is and the
// HTML body holds it HTML-escaped in an href.
func checkBodies(t *testing.T, text, htmlBody string) {
	t.Helper()
	if !strings.Contains(text, "\n"+testLink+"\n") {
		t.Errorf("text body does not hold the link on its own line:\n%s", text)
	}
	if !strings.Contains(htmlBody, `href="`+html.EscapeString(testLink)+`"`) {
		t.Errorf("HTML body does not link to the escaped link:\n%s", htmlBody)
	}
}

func jsonBody(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, b)
	}
	return m
}

type serviceCase struct {
	id       string
	make     func(client *http.Client) *provider.EmailConfig
	okStatus int
	okAnswer string
	host     string
	path     string
	auth     func(t *testing.T, h http.Header)
	body     func(t *testing.T, b []byte)
	// failAnswer is the service's documented shape of an error, echoing
	// the key; failMessage is what the error must quote of it.
	failStatus  int
	failAnswer  string
	failMessage string
}

func wantHeader(t *testing.T, h http.Header, name, want string) {
	t.Helper()
	if got := h.Get(name); got != want {
		t.Errorf("header %s = %q, want %q", name, got, want)
	}
}

func basicAuthValue(user, pass string) string {
	r, _ := http.NewRequest("GET", "http://x", nil)
	r.SetBasicAuth(user, pass)
	return r.Header.Get("Authorization")
}

func serviceCases() []serviceCase {
	simpleJSON := func(fromKey, toKey, textKey, htmlKey string, toList bool) func(t *testing.T, b []byte) {
		return func(t *testing.T, b []byte) {
			m := jsonBody(t, b)
			if m[fromKey] != testFrom {
				t.Errorf("%s = %v", fromKey, m[fromKey])
			}
			if toList {
				if to, _ := m[toKey].([]any); len(to) != 1 || to[0] != testTo {
					t.Errorf("%s = %v", toKey, m[toKey])
				}
			} else if m[toKey] != testTo {
				t.Errorf("%s = %v", toKey, m[toKey])
			}
			text, _ := m[textKey].(string)
			h, _ := m[htmlKey].(string)
			checkBodies(t, text, h)
		}
	}
	return []serviceCase{
		{
			id:       "resend",
			make:     func(c *http.Client) *provider.EmailConfig { return Resend(testKey, testFrom, WithEmailHTTPClient(c)) },
			okStatus: 200, okAnswer: `{"id":"49a3999c-0ce1-4ea6-ab68-afcd6dc2e794"}`,
			host: "api.resend.com", path: "/emails",
			auth: func(t *testing.T, h http.Header) { wantHeader(t, h, "Authorization", "Bearer "+testKey) },
			body: func(t *testing.T, b []byte) {
				simpleJSON("from", "to", "text", "html", true)(t, b)
				if m := jsonBody(t, b); m["subject"] != "Sign in to app.example.com" {
					t.Errorf("subject = %v", m["subject"])
				}
			},
			failStatus: 401, failAnswer: `{"statusCode":401,"message":"API key ` + testKey + ` is invalid","name":"validation_error"}`,
			failMessage: "API key [redacted] is invalid",
		},
		{
			id:       "sendgrid",
			make:     func(c *http.Client) *provider.EmailConfig { return SendGrid(testKey, testFrom, WithEmailHTTPClient(c)) },
			okStatus: 202, okAnswer: ``,
			host: "api.sendgrid.com", path: "/v3/mail/send",
			auth: func(t *testing.T, h http.Header) { wantHeader(t, h, "Authorization", "Bearer "+testKey) },
			body: func(t *testing.T, b []byte) {
				var m struct {
					Personalizations []struct {
						To []struct{ Email string } `json:"to"`
					} `json:"personalizations"`
					From    struct{ Email, Name string }   `json:"from"`
					Subject string                         `json:"subject"`
					Content []struct{ Type, Value string } `json:"content"`
				}
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				if len(m.Personalizations) != 1 || len(m.Personalizations[0].To) != 1 || m.Personalizations[0].To[0].Email != testTo {
					t.Errorf("personalizations = %+v", m.Personalizations)
				}
				if m.From.Email != "no-reply@acme.example" || m.From.Name != "Acme" {
					t.Errorf("from = %+v", m.From)
				}
				if len(m.Content) != 2 || m.Content[0].Type != "text/plain" || m.Content[1].Type != "text/html" {
					t.Fatalf("content = %+v", m.Content)
				}
				checkBodies(t, m.Content[0].Value, m.Content[1].Value)
			},
			failStatus: 401, failAnswer: `{"errors":[{"message":"The provided authorization grant is invalid, expired, or revoked","field":null,"help":null}]}`,
			failMessage: "The provided authorization grant is invalid, expired, or revoked",
		},
		{
			id:       "postmark",
			make:     func(c *http.Client) *provider.EmailConfig { return Postmark(testKey, testFrom, WithEmailHTTPClient(c)) },
			okStatus: 200, okAnswer: `{"To":"user@example.com","SubmittedAt":"2026-11-23T10:00:00Z","MessageID":"b7bc2f4a","ErrorCode":0,"Message":"OK"}`,
			host: "api.postmarkapp.com", path: "/email",
			auth: func(t *testing.T, h http.Header) {
				wantHeader(t, h, "X-Postmark-Server-Token", testKey)
				wantHeader(t, h, "Authorization", "")
			},
			body: func(t *testing.T, b []byte) {
				simpleJSON("From", "To", "TextBody", "HtmlBody", false)(t, b)
				if m := jsonBody(t, b); m["MessageStream"] != "outbound" {
					t.Errorf("MessageStream = %v", m["MessageStream"])
				}
			},
			failStatus: 422, failAnswer: `{"ErrorCode":300,"Message":"Invalid 'From' address: 'no-reply@acme.example'."}`,
			failMessage: "Invalid 'From' address: 'no-reply@acme.example'.",
		},
		{
			id: "mailgun",
			make: func(c *http.Client) *provider.EmailConfig {
				return Mailgun(testKey, "mg.acme.example", "", testFrom, WithEmailHTTPClient(c))
			},
			okStatus: 200, okAnswer: `{"id":"<20261123.1@mg.acme.example>","message":"Queued. Thank you."}`,
			host: "api.mailgun.net", path: "/v3/mg.acme.example/messages",
			auth: func(t *testing.T, h http.Header) { wantHeader(t, h, "Authorization", basicAuthValue("api", testKey)) },
			body: func(t *testing.T, b []byte) {
				f, err := url.ParseQuery(string(b))
				if err != nil {
					t.Fatal(err)
				}
				if f.Get("from") != testFrom || f.Get("to") != testTo || f.Get("subject") != "Sign in to app.example.com" {
					t.Errorf("form = %v", f)
				}
				checkBodies(t, f.Get("text"), f.Get("html"))
			},
			failStatus: 401, failAnswer: `Forbidden`, failMessage: "Forbidden",
		},
		{
			id: "forwardemail",
			make: func(c *http.Client) *provider.EmailConfig {
				return ForwardEmail(testKey, testFrom, WithEmailHTTPClient(c))
			},
			okStatus: 200, okAnswer: `{"id":"6523b1a5","status":"queued"}`,
			host: "api.forwardemail.net", path: "/v1/emails",
			auth:       func(t *testing.T, h http.Header) { wantHeader(t, h, "Authorization", basicAuthValue(testKey, "")) },
			body:       simpleJSON("from", "to", "text", "html", false),
			failStatus: 401, failAnswer: `{"statusCode":401,"error":"Unauthorized","message":"Invalid API token."}`,
			failMessage: "Invalid API token.",
		},
	}
}

func TestEmailServicesSend(t *testing.T) {
	for _, tc := range serviceCases() {
		t.Run(tc.id, func(t *testing.T) {
			d := newServiceDouble(t, tc.okStatus, tc.okAnswer)
			p := tc.make(d.client)
			if p.ID != tc.id || p.Common().Type != provider.TypeEmail || p.From != testFrom {
				t.Errorf("provider = %+v", p.Common())
			}
			if _, err := provider.Validate([]provider.Provider{p}); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if err := p.SendVerificationRequest(context.Background(), testRequest(tc.id)); err != nil {
				t.Fatalf("send: %v", err)
			}
			reqs := d.captured()
			if len(reqs) != 1 {
				t.Fatalf("service got %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != http.MethodPost || r.Host != tc.host || r.Path != tc.path {
				t.Errorf("request = %s https://%s%s, want POST https://%s%s", r.Method, r.Host, r.Path, tc.host, tc.path)
			}
			tc.auth(t, r.Header)
			tc.body(t, r.Body)
		})
	}
}

func TestEmailServicesRefusal(t *testing.T) {
	for _, tc := range serviceCases() {
		t.Run(tc.id, func(t *testing.T) {
			d := newServiceDouble(t, tc.failStatus, tc.failAnswer)
			err := tc.make(d.client).SendVerificationRequest(context.Background(), testRequest(tc.id))
			if !errors.Is(err, provider.ErrEmailDelivery) {
				t.Fatalf("err = %v, want ErrEmailDelivery", err)
			}
			var se *EmailServiceError
			if !errors.As(err, &se) || se.Service != tc.id || se.StatusCode != tc.failStatus || se.Message != tc.failMessage {
				t.Errorf("err = %#v, want %s %d %q", se, tc.id, tc.failStatus, tc.failMessage)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error holds the API key: %v", err)
			}
			if !strings.Contains(err.Error(), fmt.Sprint(tc.failStatus)) {
				t.Errorf("error does not give the status: %v", err)
			}
		})
	}
}

func TestEmailServiceErrorAdvice(t *testing.T) {
	for status, want := range map[int]string{401: "check the API key", 429: "try again later", 503: "try again later"} {
		d := newServiceDouble(t, status, `{"message":"no"}`)
		err := Resend(testKey, testFrom, WithEmailHTTPClient(d.client)).SendVerificationRequest(context.Background(), testRequest("resend"))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), ": no (") {
			t.Errorf("status %d: err = %v, want advice %q", status, err, want)
		}
	}
}

func TestPostmarkErrorCodeInOKAnswer(t *testing.T) {
	d := newServiceDouble(t, 200, `{"ErrorCode":406,"Message":"You tried to send to a recipient that has been marked as inactive."}`)
	err := Postmark(testKey, testFrom, WithEmailHTTPClient(d.client)).SendVerificationRequest(context.Background(), testRequest("postmark"))
	var se *EmailServiceError
	if !errors.As(err, &se) || !errors.Is(err, provider.ErrEmailDelivery) || !strings.Contains(se.Message, "ErrorCode 406: You tried to send") {
		t.Fatalf("err = %v", err)
	}
}

func TestEmailServicesCancelledContext(t *testing.T) {
	for _, tc := range serviceCases() {
		t.Run(tc.id, func(t *testing.T) {
			d := newServiceDouble(t, tc.okStatus, tc.okAnswer)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err := tc.make(d.client).SendVerificationRequest(ctx, testRequest(tc.id))
			if !errors.Is(err, context.Canceled) || !errors.Is(err, provider.ErrEmailDelivery) {
				t.Fatalf("err = %v, want context.Canceled and ErrEmailDelivery", err)
			}
			if n := len(d.captured()); n != 0 {
				t.Errorf("service got %d requests after cancellation", n)
			}
		})
	}
}

// A request stuck at the service ends when the context does.
func TestEmailServiceContextEndsStuckRequest(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	u, _ := url.Parse(srv.URL)
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, u.Host)
	}, DialTLSContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, u.Host) // never completes a TLS handshake: the server speaks plain HTTP
	}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Resend(testKey, testFrom, WithEmailHTTPClient(client)).SendVerificationRequest(ctx, testRequest("resend"))
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestEmailServicesBadConfig(t *testing.T) {
	d := newServiceDouble(t, 200, `{}`)
	c := WithEmailHTTPClient(d.client)
	noLink := testRequest("resend")
	noLink.URL = ""
	noTo := testRequest("resend")
	noTo.Identifier = ""
	twoTo := testRequest("mailgun")
	twoTo.Identifier = "a@example.com,b@example.com"
	named := testRequest("resend")
	named.Identifier = "Ada <ada@example.com>"
	cases := map[string]struct {
		p   *provider.EmailConfig
		req provider.VerificationRequest
	}{
		"empty_api_key":          {Resend("  ", testFrom, c), testRequest("resend")},
		"no_link":                {Resend(testKey, testFrom, c), noLink},
		"no_recipient":           {Resend(testKey, testFrom, c), noTo},
		"two_recipients":         {Mailgun(testKey, "mg.acme.example", MailgunUS, testFrom, c), twoTo},
		"recipient_with_name":    {Resend(testKey, testFrom, c), named},
		"mailgun_unknown_region": {Mailgun(testKey, "mg.acme.example", "ap", testFrom, c), testRequest("mailgun")},
		"mailgun_no_domain":      {Mailgun(testKey, "", MailgunEU, testFrom, c), testRequest("mailgun")},
		"mailgun_path_in_domain": {Mailgun(testKey, "mg.acme.example/../x", MailgunEU, testFrom, c), testRequest("mailgun")},
		"sendgrid_bad_from": {SendGrid(testKey, "not an address", c), func() provider.VerificationRequest {
			r := testRequest("sendgrid")
			r.From = "not an address"
			return r
		}()},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.p.SendVerificationRequest(context.Background(), tc.req)
			if !errors.Is(err, core.ErrInvalidConfig) {
				t.Errorf("err = %v, want core.ErrInvalidConfig", err)
			}
			if err != nil && strings.Contains(err.Error(), testKey) {
				t.Errorf("error holds the API key: %v", err)
			}
		})
	}
	if n := len(d.captured()); n != 0 {
		t.Errorf("service got %d requests for bad configurations", n)
	}
}

func TestEmailServicesFromRegistry(t *testing.T) {
	d := newServiceDouble(t, 200, `{"id":"x","message":"Queued. Thank you."}`)
	reg := BuiltIns()
	uc := UserConfig{EmailService: EmailServiceConfig{APIKey: testKey, From: testFrom, Domain: "mg.acme.example", Region: MailgunEU, HTTPClient: d.client}}
	for _, id := range []string{"forwardemail", "mailgun", "postmark", "resend", "sendgrid"} {
		p, err := reg.New(id, uc)
		if err != nil {
			t.Fatal(err)
		}
		e, ok := p.(*provider.EmailConfig)
		if !ok || e.ID != id || e.From != testFrom {
			t.Fatalf("%s: %T %+v", id, p, p)
		}
		if err := e.SendVerificationRequest(context.Background(), testRequest(id)); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	reqs := d.captured()
	if len(reqs) != 5 {
		t.Fatalf("got %d requests", len(reqs))
	}
	if r := reqs[1]; r.Host != "api.eu.mailgun.net" || r.Path != "/v3/mg.acme.example/messages" {
		t.Errorf("mailgun EU request went to %s%s", r.Host, r.Path)
	}
	// Without From, validation says so.
	p, _ := reg.New("resend", UserConfig{EmailService: EmailServiceConfig{APIKey: testKey}})
	_, err := provider.Validate([]provider.Provider{p})
	matchProblems(t, err, []wantProblem{{0, "From", "required"}})
}

func TestEmailServiceConcurrentSends(t *testing.T) {
	d := newServiceDouble(t, 200, `{"id":"x"}`)
	p := Resend(testKey, testFrom, WithEmailHTTPClient(d.client))
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := testRequest("resend")
			req.Identifier = fmt.Sprintf("user%d@example.com", i)
			errs <- p.SendVerificationRequest(context.Background(), req)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	seen := map[string]bool{}
	for _, r := range d.captured() {
		to, _ := jsonBody(t, r.Body)["to"].([]any)
		if len(to) == 1 {
			seen[fmt.Sprint(to[0])] = true
		}
	}
	if len(seen) != n {
		t.Errorf("service saw %d distinct recipients, want %d", len(seen), n)
	}
}

func TestEmailMessageOption(t *testing.T) {
	d := newServiceDouble(t, 200, `{}`)
	p := Resend(testKey, testFrom, WithEmailHTTPClient(d.client), WithEmailMessage(func(r provider.VerificationRequest) provider.EmailMessage {
		return provider.EmailMessage{Subject: "Your link", Text: "Open " + r.URL, HTML: "<a href=x>x</a>"}
	}))
	if err := p.SendVerificationRequest(context.Background(), testRequest("resend")); err != nil {
		t.Fatal(err)
	}
	m := jsonBody(t, d.captured()[0].Body)
	if m["subject"] != "Your link" || m["text"] != "Open "+testLink {
		t.Errorf("custom message not used: %v", m)
	}
}

func TestVerificationEmail(t *testing.T) {
	m := provider.VerificationEmail(testRequest("email"))
	if m.Subject != "Sign in to app.example.com" {
		t.Errorf("subject = %q", m.Subject)
	}
	checkBodies(t, m.Text, m.HTML)
	// A link that tries to break out of the attribute stays inside it.
	evil := provider.VerificationEmail(provider.VerificationRequest{URL: `https://a.example/"><script>alert(1)</script>`})
	if strings.Contains(evil.HTML, "<script>") {
		t.Errorf("HTML body not escaped:\n%s", evil.HTML)
	}
	if got := provider.VerificationEmail(provider.VerificationRequest{URL: "::"}).Subject; got != "Sign in to your account" {
		t.Errorf("subject without host = %q", got)
	}
}

func TestServiceMessage(t *testing.T) {
	cases := map[string]string{
		`{"message":"a"}`:                       "a",
		`{"Message":"b","ErrorCode":1}`:         "b",
		`{"error":"c"}`:                         "c",
		`{"errors":[{"message":"d"},"e"]}`:      "d; e",
		"plain\r\ntext\x00here":                 "plain text here",
		strings.Repeat("x", 400):                strings.Repeat("x", 300) + "…",
		`{"message":"line1\nSet-Cookie: evil"}`: "line1 Set-Cookie: evil",
	}
	for in, want := range cases {
		if got := serviceMessage([]byte(in)); got != want {
			t.Errorf("serviceMessage(%q) = %q, want %q", in, got, want)
		}
	}
}
