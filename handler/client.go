package handler

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientIP returns the address of the client that sent r: the connection's
// (r.RemoteAddr), unless it is one of the trusted proxies, in which case
// X-Forwarded-For is walked from the right (the entry the nearest proxy
// appended first), skipping trusted proxies, and the first address that is
// not one is the client. A client can write anything into the header, but
// only to the left of what the trusted proxies appended, so the walk never
// believes an entry that no trusted proxy vouched for. An entry that is
// not an IP address ends the walk at the last trusted proxy. It returns
// the zero Addr when r.RemoteAddr is not an IP address (a test's request,
// a Unix socket).
func ClientIP(r *http.Request, trusted []netip.Prefix) netip.Addr {
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	ip = ip.Unmap().WithZone("")
	if !isTrusted(ip, trusted) {
		return ip
	}
	values := r.Header.Values("X-Forwarded-For")
	for i := len(values) - 1; i >= 0; i-- {
		hops := strings.Split(values[i], ",")
		for j := len(hops) - 1; j >= 0; j-- {
			hop, err := netip.ParseAddr(strings.TrimSpace(hops[j]))
			if err != nil {
				return ip
			}
			ip = hop.Unmap().WithZone("")
			if !isTrusted(ip, trusted) {
				return ip
			}
		}
	}
	return ip
}

// isTrusted reports whether ip is in one of the prefixes.
func isTrusted(ip netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// client returns what a sign-in from r records with its session: the
// client's address and User-Agent.
func (h *Handler) client(r *http.Request) (ip, userAgent string) {
	if a := ClientIP(r, h.trusted); a.IsValid() {
		ip = a.String()
	}
	return ip, r.UserAgent()
}
