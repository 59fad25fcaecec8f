package handler

import (
	"net/http"
	"strings"
)

// warnOrigin logs once, at WARN, that a request reached the handler on
// another host than BaseURL's (a wrong port, 127.0.0.1 for localhost, an
// AUTH_URL left from another machine). The request is still served, but the
// pages' forms, the redirects and the OAuth callback URL all go to BaseURL,
// so the browser leaves the site it is on and sign-in fails away from the
// handler. Behind a proxy the host the browser used is X-Forwarded-Host's,
// when the proxy sets it.
func (h *Handler) warnOrigin(r *http.Request) {
	host := r.Host
	if fwd := r.Header.Get("X-Forwarded-Host"); fwd != "" {
		first, _, _ := strings.Cut(fwd, ",")
		host = strings.TrimSpace(first)
	}
	scheme, want, _ := strings.Cut(h.origin, "://")
	if host == "" || host == want {
		return
	}
	var defaultPort string
	switch scheme {
	case "http":
		defaultPort = ":80"
	case "https":
		defaultPort = ":443"
	}
	if strings.EqualFold(strings.TrimSuffix(host, defaultPort), strings.TrimSuffix(want, defaultPort)) {
		return
	}
	h.originWarned.Do(func() {
		h.log.WarnContext(r.Context(), "authport: a request reached the auth handler for host "+host+" ("+r.URL.EscapedPath()+
			"), but its BaseURL is "+h.base+": its pages, redirects and OAuth callbacks go to "+h.origin+
			", so a browser on "+host+" leaves it and sign-in fails. Set BaseURL (AUTH_URL) to the origin the browser uses, e.g. "+
			scheme+"://"+host+h.basePath+"; behind a proxy, have it send X-Forwarded-Host, or ignore this if the proxy serves "+h.origin)
	})
}
