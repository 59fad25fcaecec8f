package oauth_test

import (
	"encoding/json"

	"github.com/authport/authport/core/provider/providers"
)

// The fixtures of the later built-in providers: for each, the
// profile its API documents (reduced to a realistic sample; ids, names and
// addresses invented), the extra token members it returns, and the user and
// account the flow must make of them. OIDC providers are served by the fake
// from discovery, with the claims in a signed id_token.

// oidcClaims is a standard-claims profile for subject sub.
func oidcClaims(sub string, extra ...any) map[string]any {
	m := map[string]any{"sub": sub, "email": "ada@example.com", "email_verified": true, "name": "Ada Lovelace",
		"given_name": "Ada", "family_name": "Lovelace", "picture": "https://img.example.com/ada.png"}
	for i := 0; i+1 < len(extra); i += 2 {
		k := extra[i].(string)
		if extra[i+1] == nil {
			delete(m, k)
		} else {
			m[k] = extra[i+1]
		}
	}
	return m
}

var adaPicture = &wantUser{email: "ada@example.com", image: "https://img.example.com/ada.png"}

func builtinFixtures() []builtinCase {
	const ada = "ada@example.com"
	oidc := func(id, _, authURL, sub string, cfg providers.UserConfig, claims map[string]any) builtinCase {
		return builtinCase{id: id, cfg: cfg, authURL: authURL, method: "client_secret_basic", accountID: sub,
			claims: claims, name: "Ada Lovelace", want: adaPicture, checks: "pkce"}
	}
	iss := func(s string) providers.UserConfig { return providers.UserConfig{Issuer: s} }
	std := map[string]string{"scope": "openid profile email"}
	cases := []builtinCase{
		// OpenID Connect.
		func() builtinCase {
			c := oidc("asgardeo", "", "https://api.asgardeo.io/t/acme/oauth2/token/authorize", "0b6bd0d5-1a0d-4c7b-8d1f-1a2b3c4d5e6f",
				iss("acme"), oidcClaims("0b6bd0d5-1a0d-4c7b-8d1f-1a2b3c4d5e6f", "username", "ada"))
			c.params = std
			return c
		}(),
		func() builtinCase {
			c := oidc("authentik", "", "https://auth.example.com/application/o/wiki/authorize",
				"a8ff0bd2b8b5c2e5a6a1d1c2f0e9f7b1c3d5e7f9a1b3c5d7e9f1a3b5c7d9e1f3",
				iss("https://auth.example.com/application/o/wiki/"),
				oidcClaims("a8ff0bd2b8b5c2e5a6a1d1c2f0e9f7b1c3d5e7f9a1b3c5d7e9f1a3b5c7d9e1f3", "groups", []string{"admins"}))
			c.issuers = map[string]string{"auth.example.com/application/o/wiki": "https://auth.example.com/application/o/wiki/"}
			return c
		}(),
		func() builtinCase {
			// B2C puts the addresses in emails; the picture is not a B2C claim.
			c := oidc("azure-ad-b2c", "", "https://contoso.b2clogin.com/775527ff-9a37-4307-8b3d-cc311f58d925/v2.0/authorize",
				"0f8fad5b-d9cb-469f-a165-70867728950e",
				providers.UserConfig{Issuer: "https://contoso.b2clogin.com/775527ff-9a37-4307-8b3d-cc311f58d925/v2.0/", Tenant: "B2C_1_signupsignin"},
				oidcClaims("0f8fad5b-d9cb-469f-a165-70867728950e", "email", nil, "picture", nil,
					"emails", []string{ada, "ada@work.example.com"}, "tfp", "B2C_1_signupsignin"))
			c.issuers = map[string]string{"contoso.b2clogin.com/775527ff-9a37-4307-8b3d-cc311f58d925/v2.0": "https://contoso.b2clogin.com/775527ff-9a37-4307-8b3d-cc311f58d925/v2.0/"}
			c.params = map[string]string{"scope": "openid profile offline_access"}
			c.want = &wantUser{email: ada}
			return c
		}(),
		func() builtinCase {
			c := oidc("battlenet", "", "https://oauth.battle.net/authorize", "123456789", providers.UserConfig{},
				map[string]any{"sub": "123456789", "id": 123456789, "battle_tag": "Ada#1815"})
			c.name, c.want, c.params = "Ada#1815", &wantUser{}, map[string]string{"scope": "openid"}
			return c
		}(),
		oidc("beyondidentity", "", "https://auth-us.beyondidentity.com/v1/tenants/t1/realms/r1/applications/a1/authorize", "u-5c2a",
			iss("https://auth-us.beyondidentity.com/v1/tenants/t1/realms/r1/applications/a1"),
			oidcClaims("u-5c2a", "preferred_username", "ada")),
		func() builtinCase {
			// No name claim: the cognito:username is the name.
			c := oidc("cognito", "", "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123/authorize",
				"aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", iss("https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123"),
				oidcClaims("aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "name", nil, "given_name", nil, "family_name", nil,
					"cognito:username", "ada.lovelace", "token_use", "id"))
			c.name = "ada.lovelace"
			return c
		}(),
		func() builtinCase {
			c := oidc("descope", "", "https://api.descope.com/client-id/authorize", "U2abc", providers.UserConfig{},
				oidcClaims("U2abc", "phone_number", "+441234567890"))
			c.checks = "pkce,state"
			return c
		}(),
		oidc("duende-identity-server6", "", "https://demo.duendesoftware.com/authorize", "88421113", iss("https://demo.duendesoftware.com"),
			oidcClaims("88421113", "idp", "local")),
		func() builtinCase {
			// The picture is Frontegg's profilePictureUrl.
			c := oidc("frontegg", "", "https://app-abc123.frontegg.com/oauth/authorize", "f5c2e3d4-0000-4000-8000-000000000001",
				iss("app-abc123.frontegg.com"), oidcClaims("f5c2e3d4-0000-4000-8000-000000000001", "picture", nil,
					"profilePictureUrl", "https://img.example.com/ada.png", "tenantId", "t-1"))
			c.issuers = map[string]string{"app-abc123.frontegg.com/oauth": "https://app-abc123.frontegg.com"}
			return c
		}(),
		func() builtinCase {
			c := oidc("fusionauth", "", "https://auth.example.io/authorize", "2d9e6b1f-0000-4000-8000-0000000000aa",
				providers.UserConfig{Issuer: "https://auth.example.io", Tenant: "tenant-7"},
				oidcClaims("2d9e6b1f-0000-4000-8000-0000000000aa", "applicationId", "app-1", "roles", []string{"user"}))
			c.params = map[string]string{"scope": "openid offline_access email profile", "tenantId": "tenant-7"}
			c.checks = "pkce,state"
			return c
		}(),
		func() builtinCase {
			c := oidc("huggingface", "", "https://huggingface.co/authorize", "6433ad3e0f6a0b2e7c9d8e1f", providers.UserConfig{},
				oidcClaims("6433ad3e0f6a0b2e7c9d8e1f", "preferred_username", "ada", "isPro", false, "profile", "https://huggingface.co/ada"))
			c.params, c.checks = std, "pkce,state"
			return c
		}(),
		oidc("identity-server4", "", "https://demo.identityserver.io/authorize", "11", iss("https://demo.identityserver.io"),
			oidcClaims("11", "idp", "local", "amr", []string{"pwd"})),
		func() builtinCase {
			c := oidc("kinde", "", "https://example.kinde.com/authorize", "kp_0123456789abcdef", iss("example.kinde.com"),
				oidcClaims("kp_0123456789abcdef", "name", nil, "org_codes", []string{"org_1"}))
			c.checks = "pkce,state" // name from given and family name
			return c
		}(),
		func() builtinCase {
			c := oidc("logto", "", "https://example.logto.app/oidc/authorize", "x7k2m9", iss("https://example.logto.app/oidc"),
				oidcClaims("x7k2m9", "name", nil, "username", "ada_l"))
			c.name, c.params = "ada_l", map[string]string{"scope": "offline_access openid email profile"}
			return c
		}(),
		oidc("onelogin", "", "https://example.onelogin.com/oidc/2/authorize", "52761443", iss("example"),
			oidcClaims("52761443", "preferred_username", "ada", "groups", []string{"Engineering"})),
		oidc("ory-hydra", "", "https://example.projects.oryapis.com/authorize", "9d2b7c1e-ory", iss("https://example.projects.oryapis.com"),
			oidcClaims("9d2b7c1e-ory", "sid", "s-1")),
		func() builtinCase {
			// Passage has no name or picture claims.
			c := oidc("passage", "", "https://auth.passage.id/v1/apps/app123/authorize", "pssg-1", iss("app123"),
				map[string]any{"sub": "pssg-1", "email": ada, "email_verified": true, "phone_number": "+15555550100"})
			c.name, c.want = "", &wantUser{email: ada}
			return c
		}(),
		oidc("ping-id", "", "https://auth.pingone.com/env-1/as/authorize", "9f0c7b2e-ping", iss("https://auth.pingone.com/env-1/as"),
			oidcClaims("9f0c7b2e-ping", "env", "env-1", "org", "org-1")),
		func() builtinCase {
			c := oidc("roblox", "", "https://apis.roblox.com/oauth/authorize", "1516563360", providers.UserConfig{},
				map[string]any{"sub": "1516563360", "name": "Ada Lovelace", "nickname": "Ada", "preferred_username": "ada1815",
					"created_at": 1584573333, "profile": "https://www.roblox.com/users/1516563360/profile",
					"picture": "https://tr.rbxcdn.com/ada/150/150/AvatarHeadshot/Png"})
			c.issuers = map[string]string{"apis.roblox.com/oauth": "https://apis.roblox.com/oauth/"}
			c.params, c.checks = map[string]string{"scope": "openid profile"}, "pkce,state"
			c.want = &wantUser{image: "https://tr.rbxcdn.com/ada/150/150/AvatarHeadshot/Png"}
			return c
		}(),
		func() builtinCase {
			// The profile comes from Salesforce's userinfo endpoint.
			c := oidc("salesforce", "", "https://login.salesforce.com/authorize", "https://login.salesforce.com/id/00Dx0000000001/005x0000000001",
				providers.UserConfig{}, oidcClaims("https://login.salesforce.com/id/00Dx0000000001/005x0000000001",
					"user_id", "005x0000000001", "organization_id", "00Dx0000000001", "user_type", "STANDARD"))
			c.checks, c.tokenVia = "pkce,state,nonce", "Bearer"
			return c
		}(),
		func() builtinCase {
			c := oidc("simplelogin", "", "https://app.simplelogin.io/authorize", "ada-sl", providers.UserConfig{},
				map[string]any{"sub": "ada-sl", "id": 2, "email": ada, "email_verified": true, "name": "Ada Lovelace",
					"avatar_url": "https://img.example.com/ada.png", "client": "Example"})
			return c
		}(),
		func() builtinCase {
			c := oidc("united-effects", "", "https://auth.unitedeffects.com/ag-1/authorize", "ue-42", iss("https://auth.unitedeffects.com/ag-1"),
				map[string]any{"sub": "ue-42", "email": ada, "group": "ag-1"})
			c.name, c.want = "", &wantUser{email: ada}
			c.params = map[string]string{"scope": "openid email profile", "resource": "https://auth.unitedeffects.com/ag-1"}
			return c
		}(),
		func() builtinCase {
			// The profile comes from Vipps's userinfo endpoint.
			c := oidc("vipps", "", "https://api.vipps.no/access-management-1.0/access/authorize", "c06c4afe-d9e1-4c5d-939a-177d752a0944",
				providers.UserConfig{}, oidcClaims("c06c4afe-d9e1-4c5d-939a-177d752a0944", "phone_number", "4712345678", "sid", "7d78a726-af92-499e-b857-de263ef9a969"))
			c.issuers = map[string]string{"api.vipps.no/access-management-1.0/access": "https://api.vipps.no/access-management-1.0/access/"}
			c.params, c.checks, c.tokenVia = map[string]string{"scope": "openid name email"}, "pkce,state,nonce", "Bearer"
			return c
		}(),
		oidc("zitadel", "", "https://example-abc.zitadel.cloud/authorize", "164849408374603777", iss("https://example-abc.zitadel.cloud"),
			oidcClaims("164849408374603777", "preferred_username", "ada@example-abc.zitadel.cloud", "gender", "female")),
	}
	return append(cases, oauthFixtures()...)
}

// oauthFixtures are the OAuth 2.0 built-ins: no id_token, the profile from
// the provider's own API.
func oauthFixtures() []builtinCase {
	const ada = "ada@example.com"
	basic, post := "client_secret_basic", "client_secret_post"
	o := func(id, authURL, method, checks, accountID, name, email, image string, userinfo map[string]any) builtinCase {
		return builtinCase{id: id, authURL: authURL, method: method, checks: checks, oauth2: true, accountID: accountID,
			name: name, userinfo: userinfo, want: &wantUser{email: email, image: image}}
	}
	scope := func(c builtinCase, kv ...string) builtinCase {
		c.params = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			c.params[kv[i]] = kv[i+1]
		}
		return c
	}
	issuer := func(c builtinCase, s string) builtinCase { c.cfg.Issuer = s; return c }
	via := func(c builtinCase, s string) builtinCase { c.tokenVia = s; return c }
	headers := func(c builtinCase, kv ...string) builtinCase {
		c.headers = map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			c.headers[kv[i]] = kv[i+1]
		}
		return c
	}
	return []builtinCase{
		scope(o("42-school", "https://api.intra.42.fr/oauth/authorize", basic, "state", "93321", "Ada Lovelace", ada,
			"https://cdn.intra.42.fr/users/ada/large_ada.jpg",
			map[string]any{"api.intra.42.fr/v2/me": map[string]any{"id": 93321, "email": ada, "login": "alovelac",
				"first_name": "Ada", "last_name": "Lovelace", "usual_full_name": "Ada Lovelace", "displayname": "Ada Lovelace",
				"image": map[string]any{"link": "https://cdn.intra.42.fr/users/ada/large_ada.jpg"}, "pool_year": "2021"}}),
			"scope", "public"),
		scope(o("atlassian", "https://auth.atlassian.com/authorize", post, "state", "5b10ac8d82e05b22cc7d4ef5", "Ada Lovelace", ada,
			"https://avatar-management.example.com/ada.png",
			map[string]any{"api.atlassian.com/me": map[string]any{"account_type": "atlassian", "account_id": "5b10ac8d82e05b22cc7d4ef5",
				"email": ada, "email_verified": true, "name": "Ada Lovelace", "picture": "https://avatar-management.example.com/ada.png",
				"account_status": "active", "nickname": "ada", "zoneinfo": "Europe/London", "locale": "en-GB"}}),
			"scope", "read:me", "audience", "api.atlassian.com", "prompt", "consent"),
		// The e-mail address comes from /2.0/user/emails: the primary
		// confirmed one.
		scope(o("bitbucket", "https://bitbucket.org/site/oauth2/authorize", basic, "pkce,state", "557058:c0b72ad0-1cb5-4018-9cdc-0cde8492c443",
			"Ada Lovelace", ada, "https://avatar-management.example.com/ada-bb.png",
			map[string]any{
				"api.bitbucket.org/2.0/user": map[string]any{"uuid": "{d301aafa-d676-4ee0-88be-962be7417567}", "account_id": "557058:c0b72ad0-1cb5-4018-9cdc-0cde8492c443",
					"username": "ada", "nickname": "ada", "display_name": "Ada Lovelace", "type": "user",
					"links": map[string]any{"avatar": map[string]any{"href": "https://avatar-management.example.com/ada-bb.png"}}},
				"api.bitbucket.org/2.0/user/emails": map[string]any{"values": []map[string]any{
					{"email": "old@example.com", "is_primary": false, "is_confirmed": true, "type": "email"},
					{"email": "new@example.com", "is_primary": false, "is_confirmed": false, "type": "email"},
					{"email": ada, "is_primary": true, "is_confirmed": true, "type": "email"}}},
			}), "scope", "account email"),
		o("box", "https://account.box.com/api/oauth2/authorize", post, "state", "11446498", "Aaron Levie", ada, "https://app.box.com/api/avatar/large/11446498",
			map[string]any{"api.box.com/2.0/users/me": map[string]any{"type": "user", "id": "11446498", "name": "Aaron Levie", "login": ada,
				"language": "en", "status": "active", "avatar_url": "https://app.box.com/api/avatar/large/11446498"}}),
		issuer(scope(o("boxyhq-saml", "https://jackson.example.com/api/oauth/authorize", basic, "pkce,state", "c7a3b3c4d5", "Ada Lovelace", ada, "",
			map[string]any{"jackson.example.com/api/oauth/userinfo": map[string]any{"id": "c7a3b3c4d5", "email": ada,
				"firstName": "Ada", "lastName": "Lovelace", "requested": map[string]any{"tenant": "example.com", "product": "wiki"}}}),
			"provider", "saml"), "https://jackson.example.com"),
		o("click-up", "https://app.clickup.com/api", post, "state", "123", "John Doe", ada, "https://attachments.clickup.com/profilePictures/123_abc.jpg",
			map[string]any{"api.clickup.com/api/v2/user": map[string]any{"user": map[string]any{"id": 123, "username": "John Doe",
				"email": ada, "color": "#000000", "profilePicture": "https://attachments.clickup.com/profilePictures/123_abc.jpg",
				"initials": "JD", "week_start_day": 0, "timezone": "Europe/London"}}}),
		scope(o("coinbase", "https://login.coinbase.com/oauth2/auth", basic, "pkce,state", "9da7a204-544e-5fd1-9a12-61176c5d4cd8", "User One", ada,
			"https://images.coinbase.com/avatar?h=vR%2FY8igBoPwuwGren5JMwvDNGpURAY%2F0nRIOgH%2FY2Qh%2BQ6nomR3qusA%2Bh6o2%0Af9rH&s=128",
			map[string]any{"api.coinbase.com/v2/user": map[string]any{"data": map[string]any{"id": "9da7a204-544e-5fd1-9a12-61176c5d4cd8",
				"name": "User One", "username": "user1", "email": ada, "resource": "user", "resource_path": "/v2/user",
				"avatar_url": "https://images.coinbase.com/avatar?h=vR%2FY8igBoPwuwGren5JMwvDNGpURAY%2F0nRIOgH%2FY2Qh%2BQ6nomR3qusA%2Bh6o2%0Af9rH&s=128"}}}),
			"scope", "wallet:user:email wallet:user:read"),
		scope(o("concept2", "https://log.concept2.com/oauth/authorize", post, "state", "1", "ada_rows", ada, "https://log.concept2.com/profile/ada.jpg",
			map[string]any{"log.concept2.com/api/users/me": map[string]any{"data": map[string]any{"id": 1, "username": "ada_rows",
				"first_name": "Ada", "last_name": "Lovelace", "gender": "F", "dob": "1815-12-10", "email": ada, "country": "GBR",
				"profile_image": "https://log.concept2.com/profile/ada.jpg", "age_restricted": false, "email_permission": true,
				"max_heart_rate": nil, "weight": 60000, "logbook_privacy": "private"}}}),
			"scope", "user:read,results:write"),
		scope(o("dribbble", "https://dribbble.com/oauth/authorize", post, "state", "1", "Dan Cederholm", ada, "https://cdn.dribbble.com/users/1/avatars/normal/dc.jpg",
			map[string]any{"api.dribbble.com/v2/user": map[string]any{"id": 1, "name": "Dan Cederholm", "login": "simplebits",
				"html_url": "https://dribbble.com/simplebits", "avatar_url": "https://cdn.dribbble.com/users/1/avatars/normal/dc.jpg", "email": ada}}),
			"scope", "public"),
		headers(scope(o("dropbox", "https://www.dropbox.com/oauth2/authorize", basic, "pkce", "dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc", "Franz Ferdinand (Personal)",
			ada, "https://dl-web.dropbox.com/account_photo/get/dbaphid%3AAAHWGmIXV3sUuOmBfTz0wPsiqHUpBWvv3ZA?vers=1556069330102&size=128x128",
			map[string]any{"api.dropboxapi.com/2/users/get_current_account": map[string]any{"account_id": "dbid:AAH4f99T0taONIb-OurWxbNQ6ywGRopQngc",
				"name": map[string]any{"abbreviated_name": "FF", "display_name": "Franz Ferdinand (Personal)", "familiar_name": "Franz",
					"given_name": "Franz", "surname": "Ferdinand"}, "email": ada, "email_verified": true, "disabled": false, "country": "US", "locale": "en",
				"profile_photo_url": "https://dl-web.dropbox.com/account_photo/get/dbaphid%3AAAHWGmIXV3sUuOmBfTz0wPsiqHUpBWvv3ZA?vers=1556069330102&size=128x128"}}),
			"scope", "account_info.read", "token_access_type", "offline"), ":method", "POST"),
		scope(o("eveonline", "https://login.eveonline.com/v2/oauth/authorize", basic, "state", "95465499", "CCP Bartender", "",
			"https://images.evetech.net/characters/95465499/portrait?size=128",
			map[string]any{"login.eveonline.com/oauth/verify": map[string]any{"CharacterID": 95465499, "CharacterName": "CCP Bartender",
				"ExpiresOn": "2026-11-23T20:00:00", "Scopes": "publicData", "TokenType": "Character",
				"CharacterOwnerHash": "lots_of_letters_and_numbers", "IntellectualProperty": "EVE"}}),
			"scope", "publicData"),
		scope(o("eventbrite", "https://www.eventbrite.com/oauth/authorize", post, "state", "100000000001", "Ada Lovelace", ada,
			"https://img.evbuc.com/https%3A%2F%2Fcdn.evbuc.com%2Fimages%2F12345678%2F1%2Foriginal.jpg",
			map[string]any{"www.eventbriteapi.com/v3/users/me/": map[string]any{"id": "100000000001", "name": "Ada Lovelace",
				"first_name": "Ada", "last_name": "Lovelace", "is_public": false, "image_id": "12345678",
				"emails": []map[string]any{{"email": "old@example.com", "verified": true, "primary": false},
					{"email": ada, "verified": true, "primary": true}}}}),
			"scope", "user.profile"),
		scope(o("facebook", "https://www.facebook.com/v19.0/dialog/oauth", post, "pkce,state", "10158723614572345", "Ada Lovelace", ada,
			"https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=10158723614572345&height=50&width=50",
			map[string]any{"graph.facebook.com/me": map[string]any{"id": "10158723614572345", "name": "Ada Lovelace", "email": ada,
				"picture": map[string]any{"data": map[string]any{"height": 50, "width": 50, "is_silhouette": false,
					"url": "https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=10158723614572345&height=50&width=50"}}}}),
			"scope", "email"),
		scope(o("faceit", "https://accounts.faceit.com/accounts", basic, "pkce,state", "c1e9a2b0-4c5d-4e6f-8a9b-0c1d2e3f4a5b", "ada", ada,
			"https://assets.faceit-cdn.net/avatars/ada.jpg",
			map[string]any{"api.faceit.com/auth/v1/resources/userinfo": map[string]any{"guid": "c1e9a2b0-4c5d-4e6f-8a9b-0c1d2e3f4a5b",
				"nickname": "ada", "email": ada, "picture": "https://assets.faceit-cdn.net/avatars/ada.jpg", "locale": "en"}}),
			"redirect_popup", "true"),
		scope(o("figma", "https://www.figma.com/oauth", basic, "state", "1234567890123456789", "ada", ada,
			"https://s3-alpha.figma.com/profile/ada.png",
			map[string]any{"api.figma.com/v1/me": map[string]any{"id": "1234567890123456789", "email": ada, "handle": "ada",
				"img_url": "https://s3-alpha.figma.com/profile/ada.png"}}),
			"scope", "current_user:read"),
		// Foursquare takes the token as the oauth_token query parameter.
		via(o("foursquare", "https://foursquare.com/oauth2/authenticate", post, "state", "1234567", "Ada Lovelace", ada,
			"https://fastly.4sqi.net/img/user/original/1234567-ADA.jpg",
			map[string]any{"api.foursquare.com/v2/users/self": map[string]any{"meta": map[string]any{"code": 200},
				"response": map[string]any{"user": map[string]any{"id": "1234567", "firstName": "Ada", "lastName": "Lovelace",
					"contact": map[string]any{"email": ada}, "photo": map[string]any{"prefix": "https://fastly.4sqi.net/img/user/", "suffix": "/1234567-ADA.jpg"}}}}}),
			"query:oauth_token"),
		scope(o("freshbooks", "https://auth.freshbooks.com/service/auth/oauth/authorize", post, "state", "2192788", "Ada Lovelace", ada, "",
			map[string]any{"api.freshbooks.com/auth/api/v1/users/me": map[string]any{"response": map[string]any{"id": 2192788,
				"identity_id": 2192788, "first_name": "Ada", "last_name": "Lovelace", "email": ada, "language": "en", "confirmed_at": "2026-01-01T00:00:00Z"}}}),
			"scope", "user:profile:read"),
		// HubSpot's profile is the token's metadata, the token in the path.
		via(scope(o("hubspot", "https://app.hubspot.com/oauth/authorize", post, "state", "123", ada, ada, "",
			map[string]any{"api.hubapi.com/oauth/v1/access-tokens/*": map[string]any{"token": "at-…", "user": ada, "hub_domain": "demo.hubapi.com",
				"scopes": []string{"oauth"}, "hub_id": 62515, "app_id": 456, "expires_in": 21588, "user_id": 123, "token_type": "access"}}),
			"scope", "oauth"), "path"),
		scope(o("instagram", "https://www.instagram.com/oauth/authorize", post, "state", "17841405822304914", "Ada Lovelace", "",
			"https://scontent.cdninstagram.com/ada.jpg",
			map[string]any{"graph.instagram.com/me": map[string]any{"id": "17841405822304914", "user_id": "17841405822304914",
				"username": "ada", "name": "Ada Lovelace", "account_type": "Business", "profile_picture_url": "https://scontent.cdninstagram.com/ada.jpg"}}),
			"scope", "instagram_business_basic"),
		o("kakao", "https://kauth.kakao.com/oauth/authorize", post, "state", "1234567890", "에이다", ada, "http://k.kakaocdn.net/dn/ada/img_640x640.jpg",
			map[string]any{"kapi.kakao.com/v2/user/me": map[string]any{"id": 1234567890, "connected_at": "2026-01-01T00:00:00Z",
				"kakao_account": map[string]any{"profile_nickname_needs_agreement": false,
					"profile": map[string]any{"nickname": "에이다", "thumbnail_image_url": "http://k.kakaocdn.net/dn/ada/img_110x110.jpg",
						"profile_image_url": "http://k.kakaocdn.net/dn/ada/img_640x640.jpg", "is_default_image": false},
					"email_needs_agreement": false, "is_email_valid": true, "is_email_verified": true, "email": ada}}}),
		// Mailchimp's metadata endpoint takes "Authorization: OAuth".
		via(o("mailchimp", "https://login.mailchimp.com/oauth2/authorize", post, "state", "31491234", "Example Co", ada, "",
			map[string]any{"login.mailchimp.com/oauth2/metadata": map[string]any{"dc": "us1", "role": "owner", "accountname": "Example Co",
				"user_id": 31491234, "login": map[string]any{"email": ada, "avatar": nil, "login_id": 31491234, "login_name": "ada",
					"login_email": ada}, "login_url": "https://login.mailchimp.com", "api_endpoint": "https://us1.api.mailchimp.com"}}),
			"OAuth"),
		via(scope(o("mailru", "https://oauth.mail.ru/login", post, "state", "1234567890123456789", "Ada Lovelace", "ada@mail.ru",
			"https://filin.mail.ru/pic?email=ada%40mail.ru",
			map[string]any{"oauth.mail.ru/userinfo": map[string]any{"id": "1234567890123456789", "client_id": "client-id", "gender": "f",
				"name": "Ada Lovelace", "nickname": "ada", "locale": "ru_RU", "first_name": "Ada", "last_name": "Lovelace",
				"birthday": "10.12.1815", "image": "https://filin.mail.ru/pic?email=ada%40mail.ru", "email": "ada@mail.ru"}}),
			"scope", "userinfo"), "query:access_token"),
		issuer(scope(o("mastodon", "https://mastodon.social/oauth/authorize", post, "pkce,state", "14715", "Ada Lovelace", "",
			"https://files.mastodon.social/accounts/avatars/000/014/715/original/ada.png",
			map[string]any{"mastodon.social/api/v1/accounts/verify_credentials": map[string]any{"id": "14715", "username": "ada",
				"acct": "ada", "display_name": "Ada Lovelace", "locked": false, "bot": false, "url": "https://mastodon.social/@ada",
				"avatar":        "https://files.mastodon.social/accounts/avatars/000/014/715/original/ada.png",
				"avatar_static": "https://files.mastodon.social/accounts/avatars/000/014/715/original/ada.png"}}),
			"scope", "read:accounts"), "https://mastodon.social"),
		issuer(o("mattermost", "https://chat.example.com/oauth/authorize", post, "state", "qk1kaxyzi3gh7y4zqmd7kz8r9o", "Ada Lovelace", ada, "",
			map[string]any{"chat.example.com/api/v4/users/me": map[string]any{"id": "qk1kaxyzi3gh7y4zqmd7kz8r9o", "username": "ada",
				"email": ada, "nickname": "", "first_name": "Ada", "last_name": "Lovelace", "locale": "en", "roles": "system_user"}}),
			"https://chat.example.com"),
		o("naver", "https://nid.naver.com/oauth2.0/authorize", post, "state", "32742776", "OpenAPI", ada,
			"https://ssl.pstatic.net/static/pwe/address/nodata_33x33.gif",
			map[string]any{"openapi.naver.com/v1/nid/me": map[string]any{"resultcode": "00", "message": "success",
				"response": map[string]any{"email": ada, "nickname": "OpenAPI", "profile_image": "https://ssl.pstatic.net/static/pwe/address/nodata_33x33.gif",
					"age": "40-49", "gender": "F", "id": "32742776", "name": "오픈 API", "birthday": "12-10"}}}),
		o("netlify", "https://app.netlify.com/authorize", post, "state", "5c3a1f2e9d8b7a6c5d4e3f2a", "Ada Lovelace", ada,
			"https://avatars.githubusercontent.com/u/1234?v=4",
			map[string]any{"api.netlify.com/api/v1/user": map[string]any{"id": "5c3a1f2e9d8b7a6c5d4e3f2a", "uid": "ada",
				"full_name": "Ada Lovelace", "avatar_url": "https://avatars.githubusercontent.com/u/1234?v=4", "email": ada, "slug": "ada"}}),
		// Nextcloud's user id comes in the token response.
		func() builtinCase {
			c := issuer(o("nextcloud", "https://cloud.example.com/apps/oauth2/authorize", post, "state", "ada", "Ada Lovelace", ada,
				"https://cloud.example.com/avatar/ada/512",
				map[string]any{"cloud.example.com/ocs/v1.php/cloud/users/ada": map[string]any{"ocs": map[string]any{
					"meta": map[string]any{"status": "ok", "statuscode": 100, "message": "OK"},
					"data": map[string]any{"enabled": true, "id": "ada", "email": ada, "displayname": "Ada Lovelace", "language": "en"}}}}),
				"https://cloud.example.com")
			c.token = map[string]any{"user_id": "ada"}
			c.headers = map[string]string{"OCS-APIRequest": "true"}
			return c
		}(),
		// Notion's profile is the owner of the integration's bot user.
		headers(scope(o("notion", "https://api.notion.com/v1/oauth/authorize", basic, "state", "6794760a-1f15-45cd-9c65-0dfe42f5135a", "Aman Gupta", ada,
			"https://s3-us-west-2.amazonaws.com/public.notion-static.com/aman.png",
			map[string]any{"api.notion.com/v1/users/me": map[string]any{"object": "user", "id": "16d84278-ab0e-484c-9bdd-b35da3bd8905",
				"name": "pied piper", "avatar_url": nil, "type": "bot", "bot": map[string]any{"owner": map[string]any{"type": "user",
					"user": map[string]any{"object": "user", "id": "6794760a-1f15-45cd-9c65-0dfe42f5135a", "name": "Aman Gupta",
						"avatar_url": "https://s3-us-west-2.amazonaws.com/public.notion-static.com/aman.png", "type": "person",
						"person": map[string]any{"email": ada}}}, "workspace_name": "Example"}}}),
			"owner", "user"), "Notion-Version", "2022-06-28"),
		issuer(o("osso", "https://demo.ossoapp.com/oauth/authorize", post, "state", "a5d9f3b2-2f16-4b7c-8e2a-0f6a2b3c4d5e", ada, ada, "",
			map[string]any{"demo.ossoapp.com/oauth/me": map[string]any{"id": "a5d9f3b2-2f16-4b7c-8e2a-0f6a2b3c4d5e", "email": ada,
				"idp": "Okta", "requested": map[string]any{"domain": "example.com"}}}), "https://demo.ossoapp.com"),
		scope(o("osu", "https://osu.ppy.sh/oauth/authorize", post, "state", "2", "peppy", "", "https://a.ppy.sh/2?1519081077.png",
			map[string]any{"osu.ppy.sh/api/v2/me": map[string]any{"id": 2, "username": "peppy", "avatar_url": "https://a.ppy.sh/2?1519081077.png",
				"country_code": "AU", "is_supporter": true, "playmode": "osu"}}),
			"scope", "identify"),
		scope(o("patreon", "https://www.patreon.com/oauth2/authorize", post, "state", "12345689", "Ada Lovelace", ada,
			"https://c8.patreon.com/2/200/12345689",
			map[string]any{"www.patreon.com/api/oauth2/v2/identity": map[string]any{"data": map[string]any{"id": "12345689", "type": "user",
				"attributes": map[string]any{"email": ada, "full_name": "Ada Lovelace", "image_url": "https://c8.patreon.com/2/200/12345689"}},
				"links": map[string]any{"self": "https://www.patreon.com/api/oauth2/v2/user/12345689"}}}),
			"scope", "identity identity[email]"),
		scope(o("pinterest", "https://www.pinterest.com/oauth", basic, "state", "ada_pins", "ada_pins", "", "https://i.pinimg.com/600x600_R/ada.jpg",
			map[string]any{"api.pinterest.com/v5/user_account": map[string]any{"account_type": "PINNER", "username": "ada_pins",
				"profile_image": "https://i.pinimg.com/600x600_R/ada.jpg", "website_url": "https://example.com", "follower_count": 12}}),
			"scope", "user_accounts:read"),
		o("pipedrive", "https://oauth.pipedrive.com/oauth/authorize", basic, "state", "123", "Ada Lovelace", ada, "https://pipedrive.example.com/ada.png",
			map[string]any{"api.pipedrive.com/v1/users/me": map[string]any{"success": true, "data": map[string]any{"id": 123, "name": "Ada Lovelace",
				"email": ada, "icon_url": "https://pipedrive.example.com/ada.png", "company_id": 77, "company_name": "Example", "locale": "en_GB"}}}),
		scope(o("reddit", "https://www.reddit.com/api/v1/authorize", basic, "state", "abc12", "ada_l", "",
			"https://styles.redditmedia.com/t5_1/styles/profileIcon_ada.png?width=256&height=256",
			map[string]any{"oauth.reddit.com/api/v1/me": map[string]any{"id": "abc12", "name": "ada_l", "verified": true, "has_verified_email": true,
				"icon_img": "https://styles.redditmedia.com/t5_1/styles/profileIcon_ada.png?width=256&amp;height=256", "created": 1.6e9}}),
			"scope", "identity"),
		scope(o("spotify", "https://accounts.spotify.com/authorize", basic, "pkce", "wizzler", "JM Wizzler", ada,
			"https://i.scdn.co/image/ab6775700000ee85wizzler",
			map[string]any{"api.spotify.com/v1/me": map[string]any{"country": "SE", "display_name": "JM Wizzler", "email": ada,
				"id": "wizzler", "product": "premium", "type": "user", "uri": "spotify:user:wizzler",
				"images": []map[string]any{{"url": "https://i.scdn.co/image/ab6775700000ee85wizzler", "height": 300, "width": 300}}}}),
			"scope", "user-read-email"),
		scope(o("strava", "https://www.strava.com/oauth/authorize", post, "state", "1234567890987654321", "Marianne Teutenberg", "",
			"https://dgalywyr863hv.cloudfront.net/pictures/athletes/1234567890987654321/large.jpg",
			map[string]any{"www.strava.com/api/v3/athlete": map[string]any{"id": json.Number("1234567890987654321"), "username": "marianne_t",
				"firstname": "Marianne", "lastname": "Teutenberg", "city": "San Francisco", "country": "US",
				"profile_medium": "https://dgalywyr863hv.cloudfront.net/pictures/athletes/1234567890987654321/medium.jpg",
				"profile":        "https://dgalywyr863hv.cloudfront.net/pictures/athletes/1234567890987654321/large.jpg"}}),
			"scope", "read", "approval_prompt", "auto"),
		scope(o("threads", "https://threads.net/oauth/authorize", post, "state", "1234567", "Ada Lovelace", "", "https://scontent.cdninstagram.com/threads/ada.jpg",
			map[string]any{"graph.threads.net/v1.0/me": map[string]any{"id": "1234567", "username": "ada", "name": "Ada Lovelace",
				"threads_profile_picture_url": "https://scontent.cdninstagram.com/threads/ada.jpg", "threads_biography": "Analyst"}}),
			"scope", "threads_basic"),
		headers(o("trakt", "https://trakt.tv/oauth/authorize", post, "state", "sean", "Sean Rudford", "", "https://walter-r2.trakt.tv/images/users/000/002/297/avatars/large/sean.jpg",
			map[string]any{"api.trakt.tv/users/me": map[string]any{"username": "sean", "private": false, "name": "Sean Rudford", "vip": true,
				"ids":    map[string]any{"slug": "sean", "uuid": "b6589fc6ab0dc82cf12099d1c2d40ab994e8410c"},
				"images": map[string]any{"avatar": map[string]any{"full": "https://walter-r2.trakt.tv/images/users/000/002/297/avatars/large/sean.jpg"}}}}), "trakt-api-version", "2", "trakt-api-key", fakeClientID),
		scope(o("twitter", "https://x.com/i/oauth2/authorize", basic, "pkce,state", "2244994945", "X Dev", "",
			"https://pbs.twimg.com/profile_images/1445764922474827784/W2zEPN7U_normal.jpg",
			map[string]any{"api.x.com/2/users/me": map[string]any{"data": map[string]any{"id": "2244994945", "name": "X Dev", "username": "TwitterDev",
				"profile_image_url": "https://pbs.twimg.com/profile_images/1445764922474827784/W2zEPN7U_normal.jpg"}}}),
			"scope", "users.read tweet.read offline.access"),
		// VK puts the e-mail address in the token response.
		func() builtinCase {
			c := scope(o("vk", "https://oauth.vk.com/authorize", post, "state", "210700286", "Lindsey Stirling", ada,
				"https://sun1-00.userapi.com/s/v1/ig2/ada.jpg?size=100x100",
				map[string]any{"api.vk.com/method/users.get": map[string]any{"response": []map[string]any{{"id": 210700286,
					"first_name": "Lindsey", "last_name": "Stirling", "can_access_closed": true, "is_closed": false,
					"photo_100": "https://sun1-00.userapi.com/s/v1/ig2/ada.jpg?size=100x100"}}}}),
				"scope", "email", "v", "5.131")
			c.token = map[string]any{"user_id": 210700286, "email": ada}
			return c
		}(),
		scope(o("webex", "https://webexapis.com/v1/authorize", post, "pkce", "Y2lzY29zcGFyazovL3VzL1BFT1BMRS9hZGE", "Ada Lovelace", ada,
			"https://avatar-prod-us-east-2.webexcontent.com/ada~1600",
			map[string]any{"webexapis.com/v1/people/me": map[string]any{"id": "Y2lzY29zcGFyazovL3VzL1BFT1BMRS9hZGE", "emails": []string{ada},
				"displayName": "Ada Lovelace", "nickName": "Ada", "firstName": "Ada", "lastName": "Lovelace",
				"avatar": "https://avatar-prod-us-east-2.webexcontent.com/ada~1600", "orgId": "Y2lzY29zcGFyazovL3VzL09SRy9leGFtcGxl", "type": "person"}}),
			"scope", "spark:kms spark:people_read"),
		o("wikimedia", "https://meta.wikimedia.org/w/rest.php/oauth2/authorize", basic, "pkce", "12345678", "Ada Lovelace", ada, "",
			map[string]any{"meta.wikimedia.org/w/rest.php/oauth2/resource/profile": map[string]any{"sub": "12345678", "username": "Ada Lovelace",
				"editcount": 1815, "confirmed_email": true, "blocked": false, "registered": "20150101000000",
				"groups": []string{"*", "user", "autoconfirmed"}, "rights": []string{"read", "edit"}, "realname": "", "email": ada}}),
		scope(o("wordpress", "https://public-api.wordpress.com/oauth2/authorize", post, "state", "33", "Ada Lovelace", ada,
			"https://0.gravatar.com/avatar/ada?s=96&d=identicon",
			map[string]any{"public-api.wordpress.com/rest/v1/me": map[string]any{"ID": 33, "display_name": "Ada Lovelace", "username": "ada",
				"email": ada, "email_verified": true, "primary_blog": 1234, "avatar_URL": "https://0.gravatar.com/avatar/ada?s=96&d=identicon",
				"profile_URL": "https://gravatar.com/ada"}}),
			"scope", "auth"),
		func() builtinCase {
			c := scope(o("workos", "https://api.workos.com/sso/authorize", post, "state", "prof_01DMC79VCBZ0NY2099737PSVF1", "Todd Rundgren",
				"todd@example.com", "https://img.example.com/todd.png",
				map[string]any{"api.workos.com/sso/profile": map[string]any{"object": "profile", "id": "prof_01DMC79VCBZ0NY2099737PSVF1",
					"organization_id": "org_01EHQMYV6MBK39QC5PZXHY59C3", "connection_id": "conn_01E4ZCR3C56J083X43JQXF3JK5",
					"connection_type": "GoogleOAuth", "idp_id": "103456789", "email": "todd@example.com", "first_name": "Todd",
					"last_name": "Rundgren", "raw_attributes": map[string]any{"picture": "https://img.example.com/todd.png"}}}),
				"connection", "conn_01E4ZCR3C56J083X43JQXF3JK5")
			c.cfg.Tenant = "conn_01E4ZCR3C56J083X43JQXF3JK5"
			return c
		}(),
		// Yandex takes "Authorization: OAuth"; the avatar URL is built from
		// default_avatar_id.
		via(scope(o("yandex", "https://oauth.yandex.ru/authorize", basic, "pkce", "1000034426", "Ivan Ivanov", "test@yandex.ru",
			"https://avatars.yandex.net/get-yapic/31804%2FBYkogAC6AoB17bN1HKRFAyKiM4-1/islands-200",
			map[string]any{"login.yandex.ru/info": map[string]any{"login": "ivan", "id": "1000034426", "client_id": "client-id",
				"psuid": "1.AAceCw.tbHgw5DtJ9_zeqPrk-Ba2w.qPWSRC5v2t2IaksPJgnge", "display_name": "Ivan Ivanov", "real_name": "Ivan Ivanov",
				"first_name": "Ivan", "last_name": "Ivanov", "default_email": "test@yandex.ru", "emails": []string{"test@yandex.ru", "other-test@yandex.ru"},
				"default_avatar_id": "31804/BYkogAC6AoB17bN1HKRFAyKiM4-1", "is_avatar_empty": false}}),
			"scope", "login:info login:email login:avatar"), "OAuth"),
		via(scope(o("zoho", "https://accounts.zoho.com/oauth/v2/auth", post, "state", "694422591", "Ada Lovelace", ada, "",
			map[string]any{"accounts.zoho.com/oauth/user/info": map[string]any{"First_Name": "Ada", "Email": ada, "Last_Name": "Lovelace",
				"Display_Name": "Ada Lovelace", "ZUID": 694422591}}),
			"scope", "AaaServer.profile.Read"), "Zoho-oauthtoken"),
		o("zoom", "https://zoom.us/oauth/authorize", basic, "pkce", "KDcuGIm1QgePTO8WbOqwIQ", "Jill Chill", ada, "https://lh4.googleusercontent.com/-ada/photo.jpg",
			map[string]any{"api.zoom.us/v2/users/me": map[string]any{"id": "KDcuGIm1QgePTO8WbOqwIQ", "first_name": "Jill", "last_name": "Chill",
				"display_name": "Jill Chill", "email": ada, "type": 2, "pic_url": "https://lh4.googleusercontent.com/-ada/photo.jpg",
				"account_id": "q6gBJVO5TzexKYTb_I2rpg", "status": "active", "verified": 1}}),
	}
}
