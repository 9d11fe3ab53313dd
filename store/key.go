package store

import "strings"

// Root is the prefix of every key mkube writes, as in Kubernetes.
const Root = "/registry/"

// Key builds /registry/<resource>/<namespace>/<name>, or
// /registry/<resource>/<name> when namespace is empty (cluster-scoped).
func Key(resource, namespace, name string) string {
	if namespace == "" {
		return Root + resource + "/" + name
	}
	return Root + resource + "/" + namespace + "/" + name
}

// Prefix is the key prefix of a resource's objects, in one namespace or, with
// namespace "", in all of them. It ends in "/" so that "pods" never matches
// "podtemplates".
func Prefix(resource, namespace string) string {
	if namespace == "" {
		return Root + resource + "/"
	}
	return Root + resource + "/" + namespace + "/"
}

// NamespaceOf returns the namespace part of a namespaced resource's key.
func NamespaceOf(key, resource string) string {
	rest := strings.TrimPrefix(key, Prefix(resource, ""))
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return rest[:i]
	}
	return ""
}
