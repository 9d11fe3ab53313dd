// Package rbac is --authorization-mode=RBAC (seed 003 §十二): a request is
// allowed if some binding of the user grants it.
//
//  1. The subjects a request is from: its user, each of its groups, and
//     for a ServiceAccount subject the user system:serviceaccount:<ns>:<name>
//     (index.go keys all three the same way).
//  2. The bindings naming them: every ClusterRoleBinding, and the
//     RoleBindings of the request's namespace (a RoleBinding grants only
//     there, even when it names a ClusterRole).
//  3. The rules of each binding's role; the request is allowed by the
//     first rule that matches it (match.go). Rules only grant: with none,
//     the answer is "no opinion", and the server's 403 says what was asked.
//
// The roles and bindings are kept in memory (Policy), fed by the API
// server from its own storage and watch cache, and indexed by subject, so
// that a request costs a few map lookups, not a list of every binding.
package rbac
