package betterauth

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/authport/authport/adapters/redis/internal/shared"
	"github.com/authport/authport/core"
)

// UpdateUser implements [core.UserUpdater]: the primary adapter updates
// the user, then, as Better Auth's updateUser does (refreshUserSessions),
// the copy of the user in each of its listed sessions is replaced, the
// sessions' TTLs kept, in one compare-and-set script. When the refresh
// fails the user is updated all the same and the error says so: the
// copies are what Better Auth's getSession returns, authport reads the
// primary.
func (a *Adapter) UpdateUser(ctx context.Context, up core.UserUpdate) (*core.User, error) {
	u, err := a.primary.UpdateUser(ctx, up)
	if err != nil || u == nil {
		return u, err
	}
	if err := a.refreshCopies(ctx, *u); err != nil {
		return u, errors.Join(errors.New("the user was updated, but refreshing its copy in the sessions in Redis failed (Better Auth's getSession shows the old one until they are refreshed)"), err)
	}
	return u, nil
}

// RefreshUserSessions replaces the copy of the user in each of its listed
// sessions with u, as Better Auth's refreshUserSessions does: for a user
// changed in the primary database other than through the adapter.
func (a *Adapter) RefreshUserSessions(ctx context.Context, u core.User) error {
	if u.ID == "" {
		return shared.Invalid(core.MethodUpdateUser, "id", "is empty")
	}
	return a.refreshCopies(ctx, u)
}

func (a *Adapter) refreshCopies(ctx context.Context, u core.User) error {
	_, err := shared.CAS(ctx, func() (struct{}, bool, error) {
		_, l, err := a.readList(ctx, u.ID)
		if err != nil || len(l) == 0 {
			return struct{}{}, true, err
		}
		var ks []string
		seen := map[string]bool{}
		for _, e := range l {
			if !seen[e.Token] && checkToken(core.MethodUpdateUser, e.Token) == nil {
				seen[e.Token] = true
				ks = append(ks, a.k.session(e.Token))
			}
		}
		if len(ks) == 0 {
			return struct{}{}, true, nil
		}
		vals, err := a.c.MGet(ctx, ks...).Result()
		if err != nil {
			return struct{}{}, false, err
		}
		user, err := userCopy(u, a.now())
		if err != nil {
			return struct{}{}, false, err
		}
		var keys []string
		var args []any
		for i, v := range vals {
			raw, ok := v.(string)
			if !ok || !ownedBy(raw, u.ID) {
				continue
			}
			_, own := u.Data["createdAt"]
			next, err := replaceUser(raw, user, !own)
			if err != nil {
				continue // not a session value: not Better Auth's either
			}
			keys = append(keys, ks[i])
			args = append(args, raw, next)
		}
		if len(keys) == 0 {
			return struct{}{}, true, nil
		}
		res, err := a.s.replaceValues.Run(ctx, a.c, keys, args...).Text()
		return struct{}{}, err == nil && res == "ok", err
	})
	return err
}

// ownedBy reports whether the session value raw is of the user uid.
func ownedBy(raw, uid string) bool {
	var doc struct {
		Session struct {
			UserID string `json:"userId"`
		} `json:"session"`
	}
	return json.Unmarshal([]byte(raw), &doc) == nil && doc.Session.UserID == uid
}

// DeleteUser implements [core.UserDeleter] as Better Auth's deleteUser:
// the primary adapter deletes the user (its accounts and authenticators
// with it), then the sessions its list names and the list go, and
// revoked-sessions-before-<userId> is set to now for the revocation TTL,
// in one script, which ends for both sides any session of the user that a
// racing sign-in wrote after the list was read.
func (a *Adapter) DeleteUser(ctx context.Context, id string) (*core.User, error) {
	u, err := a.primary.DeleteUser(ctx, id)
	if err != nil || id == "" {
		return u, err
	}
	var revokeAt int64
	if u != nil {
		revokeAt = max(a.now().UnixMilli(), 1)
	}
	if _, err := a.deleteSessions(ctx, id, "", revokeAt); err != nil {
		return u, errors.Join(errors.New("the user was deleted, but deleting its sessions in Redis failed; call DeleteUser again"), err)
	}
	return u, nil
}
