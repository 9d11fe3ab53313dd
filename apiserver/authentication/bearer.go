package authentication

import "strings"

// ParseBearer reads the token of an `Authorization: Bearer <token>`
// header as kube-apiserver's bearertoken authenticator does: the scheme
// case-insensitively "Bearer", then one space, then a token that is not
// empty. Anything else (no header, Basic, "Bearer" alone, two spaces
// before the token) is no bearer token: not an error, the request is then
// judged by its other credentials, or is anonymous. What follows a space
// after the token is ignored, as Kubernetes ignores it.
func ParseBearer(header string) (token string, ok bool) {
	scheme, rest, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	token, _, _ = strings.Cut(rest, " ")
	return token, token != ""
}
