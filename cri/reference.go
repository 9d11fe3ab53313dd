package cri

import (
	"fmt"
	"strings"
)

// normalizeRef spells an image reference in full, as containerd stores it
// (the rules of Docker's reference package, simplified):
//
//   - a first path component that has a "." or ":" or is "localhost" is a
//     registry host; otherwise the registry is docker.io;
//   - on docker.io, a one-component name lives under "library/";
//   - a name without a tag or digest gets the tag "latest".
//
// So "nginx" is "docker.io/library/nginx:latest", "bitnami/redis:7" is
// "docker.io/bitnami/redis:7", and "registry.k8s.io/pause:3.10" stays as
// it is. Like Docker, it refuses upper-case repository names.
func normalizeRef(ref string) (string, error) {
	if ref == "" || strings.ContainsAny(ref, " \t\n") {
		return "", fmt.Errorf("invalid reference format: %q", ref)
	}
	name, digest, hasDigest := strings.Cut(ref, "@")
	host, rest, hasHost := strings.Cut(name, "/")
	if !hasHost || !(strings.ContainsAny(host, ".:") || host == "localhost") {
		host, rest = "docker.io", name
	}
	if host == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	repo, _, hasTag := strings.Cut(rest, ":")
	if repo != strings.ToLower(repo) {
		return "", fmt.Errorf("invalid reference format: repository name (%s) must be lowercase", repo)
	}
	full := host + "/" + rest
	switch {
	case hasDigest:
		return full + "@" + digest, nil
	case !hasTag:
		return full + ":latest", nil
	}
	return full, nil
}
