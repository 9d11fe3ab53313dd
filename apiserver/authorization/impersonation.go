package authorization

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Impersonate is kube-apiserver's impersonation: a request with the
// headers of kubectl's --as, --as-group and --as-uid (Impersonate-User,
// Impersonate-Group, Impersonate-Uid, Impersonate-Extra-<key>) acts as that
// user, if its sender may "impersonate" each of them:
//
//	users "jane" (verb impersonate, resource users, API group "")
//	serviceaccounts "default" in namespace ns, for system:serviceaccount:ns:default
//	groups "manager"; uids and userextras/<key> in authentication.k8s.io
//
// The user acted as is in system:authenticated (unless it is
// system:anonymous, or system:unauthenticated is asked for), and a
// ServiceAccount, asked for without groups, in its two groups. ok is false
// when the request asks for nobody else.
func Impersonate(ctx context.Context, authz Authorizer, sender authenticationv1.UserInfo, h http.Header) (as authenticationv1.UserInfo, ok bool, err error) {
	name := h.Get(authenticationv1.ImpersonateUserHeader)
	groups := h.Values(authenticationv1.ImpersonateGroupHeader)
	uid := h.Get(authenticationv1.ImpersonateUIDHeader)
	var extra map[string]authenticationv1.ExtraValue // made only if asked for: most requests impersonate nobody
	for k, v := range h {
		if key, found := strings.CutPrefix(k, authenticationv1.ImpersonateUserExtraHeaderPrefix); found {
			if extra == nil {
				extra = map[string]authenticationv1.ExtraValue{}
			}
			extra[strings.ToLower(key)] = v
		}
	}
	if name == "" {
		if len(groups) > 0 || uid != "" || len(extra) > 0 {
			return as, false, apierrors.NewInternalError(fmt.Errorf("requested groups %q, uid %q or extras %v without impersonating a user", groups, uid, extra))
		}
		return as, false, nil
	}

	// Each thing asked for is checked as a request of the sender's.
	check := func(group, resource, subresource, namespace, name string) error {
		a := Attributes{User: sender, Verb: "impersonate", ResourceRequest: true, APIGroup: group,
			Resource: resource, Subresource: subresource, Namespace: namespace, Name: name}
		if d, reason, _ := authz.Authorize(ctx, a); d != Allow {
			return Forbidden(a, reason)
		}
		return nil
	}
	as = authenticationv1.UserInfo{Username: name, UID: uid, Groups: slices.Clone(groups)}
	if ns, sa, isSA := serviceAccountOf(name); isSA {
		if err := check("", "serviceaccounts", "", ns, sa); err != nil {
			return as, false, err
		}
		if len(groups) == 0 {
			as.Groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}
		}
	} else if err := check("", "users", "", "", name); err != nil {
		return as, false, err
	}
	for _, g := range groups {
		if err := check("", "groups", "", "", g); err != nil {
			return as, false, err
		}
	}
	if uid != "" {
		if err := check(authenticationv1.GroupName, "uids", "", "", uid); err != nil {
			return as, false, err
		}
	}
	for key, values := range extra {
		for _, v := range values {
			if err := check(authenticationv1.GroupName, "userextras", key, "", v); err != nil {
				return as, false, err
			}
		}
		as.Extra = extra
	}
	if name != "system:anonymous" && !slices.Contains(as.Groups, "system:authenticated") && !slices.Contains(as.Groups, "system:unauthenticated") {
		as.Groups = append(as.Groups, "system:authenticated")
	}
	return as, true, nil
}

// serviceAccountOf splits system:serviceaccount:<namespace>:<name>.
func serviceAccountOf(user string) (namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(user, "system:serviceaccount:")
	if !found {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, ":")
	return namespace, name, ok && namespace != "" && name != "" && !strings.Contains(name, ":")
}
