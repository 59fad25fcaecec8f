package oauthtest

import (
	"html"
	"net/http"
	"net/url"
	"strings"
)

// A small HTML scanner for [DexServer.Login]: enough to read the forms,
// inputs and links of dex's pages, and their text for error messages. It
// reads tags and attributes the way browsers tokenize them (quoted and
// unquoted values, entities, comments, raw script and style); it builds no
// tree. (golang.org/x/net/html would add a module to every adapter that
// imports this package.)

// htmlToken is a start tag, an end tag or a run of text.
type htmlToken struct {
	tag   string            // lowercased tag name; "" for text
	end   bool              // an end tag
	attrs map[string]string // lowercased names, unescaped values
	text  string            // unescaped text, for a text token
}

// tokenize splits an HTML page into tokens. Comments, doctypes and the
// content of script and style elements are left out. It never fails: what
// is not a tag is text.
func tokenize(page []byte) []htmlToken {
	s := string(page)
	var toks []htmlToken
	text := func(t string) {
		if t != "" {
			toks = append(toks, htmlToken{text: html.UnescapeString(t)})
		}
	}
	for len(s) > 0 {
		lt := strings.IndexByte(s, '<')
		if lt < 0 {
			text(s)
			break
		}
		text(s[:lt])
		s = s[lt:]
		switch {
		case strings.HasPrefix(s, "<!--"):
			s = skipPast(s[4:], "-->")
		case strings.HasPrefix(s, "<!"), strings.HasPrefix(s, "<?"):
			s = skipPast(s[2:], ">")
		case strings.HasPrefix(s, "</") && len(s) > 2 && isLetter(s[2]):
			name, rest := tagName(s[2:])
			toks = append(toks, htmlToken{tag: name, end: true})
			s = skipPast(rest, ">")
		case len(s) > 1 && isLetter(s[1]):
			name, rest := tagName(s[1:])
			attrs, rest := tagAttrs(rest)
			toks = append(toks, htmlToken{tag: name, attrs: attrs})
			s = rest
			if name == "script" || name == "style" {
				s = skipRaw(s, name)
			}
		default: // a lone '<' is text
			text("<")
			s = s[1:]
		}
	}
	return toks
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// skipPast returns what follows the first sep in s, or "" without one.
func skipPast(s, sep string) string {
	if i := strings.Index(s, sep); i >= 0 {
		return s[i+len(sep):]
	}
	return ""
}

// skipRaw returns what follows the end tag </name> of a raw-text element.
func skipRaw(s, name string) string {
	lower := strings.ToLower(s)
	if i := strings.Index(lower, "</"+name); i >= 0 {
		return skipPast(s[i:], ">")
	}
	return ""
}

// tagName reads a tag name at the start of s.
func tagName(s string) (name, rest string) {
	i := 0
	for i < len(s) && !isSpace(s[i]) && s[i] != '/' && s[i] != '>' {
		i++
	}
	return strings.ToLower(s[:i]), s[i:]
}

// tagAttrs reads the attributes of a start tag up to and including its
// closing '>'.
func tagAttrs(s string) (map[string]string, string) {
	attrs := map[string]string{}
	for {
		for len(s) > 0 && (isSpace(s[0]) || s[0] == '/') {
			s = s[1:]
		}
		if s == "" {
			return attrs, ""
		}
		if s[0] == '>' {
			return attrs, s[1:]
		}
		i := 1 // an attribute name may start with any other character, even '='
		for i < len(s) && !isSpace(s[i]) && s[i] != '/' && s[i] != '>' && s[i] != '=' {
			i++
		}
		name := strings.ToLower(s[:i])
		s = strings.TrimLeft(s[i:], " \t\n\r\f")
		value := ""
		if strings.HasPrefix(s, "=") {
			s = strings.TrimLeft(s[1:], " \t\n\r\f")
			switch {
			case s == "":
			case s[0] == '"' || s[0] == '\'':
				if end := strings.IndexByte(s[1:], s[0]); end >= 0 {
					value, s = s[1:1+end], s[2+end:]
				} else {
					value, s = s[1:], ""
				}
			default:
				j := 0
				for j < len(s) && !isSpace(s[j]) && s[j] != '>' {
					j++
				}
				value, s = s[:j], s[j:]
			}
		}
		if _, dup := attrs[name]; !dup { // the first one wins, as in browsers
			attrs[name] = html.UnescapeString(value)
		}
	}
}

// htmlInput is an input of a form.
type htmlInput struct {
	name, typ, value string
	checked          bool
}

// htmlForm is a form: where it goes, how, and its inputs.
type htmlForm struct {
	action string // as written; "" is the page itself
	method string // GET or POST
	inputs []htmlInput
}

// htmlLink is an <a href> and its text.
type htmlLink struct {
	href, text string
}

// htmlPage is what Login needs of a page.
type htmlPage struct {
	forms []htmlForm
	links []htmlLink
}

// parsePage reads the forms and links of an HTML page.
func parsePage(page []byte) htmlPage {
	var p htmlPage
	form := -1 // index of the open form
	link := -1 // index of the open link
	for _, tok := range tokenize(page) {
		switch {
		case tok.tag == "" && link >= 0:
			p.links[link].text += tok.text
		case tok.tag == "form" && !tok.end:
			method := http.MethodGet
			if strings.EqualFold(tok.attrs["method"], http.MethodPost) {
				method = http.MethodPost
			}
			p.forms = append(p.forms, htmlForm{action: tok.attrs["action"], method: method})
			form = len(p.forms) - 1
		case tok.tag == "form" && tok.end:
			form = -1
		case tok.tag == "input" && !tok.end && form >= 0:
			_, checked := tok.attrs["checked"]
			typ := strings.ToLower(strings.TrimSpace(tok.attrs["type"]))
			if typ == "" {
				typ = "text"
			}
			p.forms[form].inputs = append(p.forms[form].inputs, htmlInput{
				name: tok.attrs["name"], typ: typ, value: tok.attrs["value"], checked: checked,
			})
		case tok.tag == "a" && !tok.end:
			if href, ok := tok.attrs["href"]; ok {
				p.links = append(p.links, htmlLink{href: strings.TrimSpace(href)})
				link = len(p.links) - 1
			}
		case tok.tag == "a" && tok.end:
			link = -1
		}
	}
	for i := range p.links {
		p.links[i].text = strings.Join(strings.Fields(p.links[i].text), " ")
	}
	return p
}

// passwordForm returns the first form with a password input: dex's login
// form.
func (p htmlPage) passwordForm() (htmlForm, bool) {
	for _, f := range p.forms {
		for _, in := range f.inputs {
			if in.typ == "password" {
				return f, true
			}
		}
	}
	return htmlForm{}, false
}

// approvalForm returns the form of dex's approval page that grants access
// (approval=approve), shown when the approval screen is not skipped.
func (p htmlPage) approvalForm() (htmlForm, bool) {
	for _, f := range p.forms {
		for _, in := range f.inputs {
			if in.name == "approval" && in.value == "approve" {
				return f, true
			}
		}
	}
	return htmlForm{}, false
}

// dexPasswordConnectorID is the connector id dex gives its password
// database.
const dexPasswordConnectorID = "local"

// passwordConnector returns the link of dex's connector list, on the page
// at base, that leads to the password database's login form: the one to
// .../auth/local, resolved against base.
func (p htmlPage) passwordConnector(base *url.URL) (*url.URL, bool) {
	for _, l := range p.links {
		u, err := base.Parse(l.href)
		if err != nil {
			continue
		}
		if strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/auth/"+dexPasswordConnectorID) {
			return u, true
		}
	}
	return nil, false
}
