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
//
// Where things live:
//
//	file           what it holds
//	policy.go      the Policy: every role and binding, fed from the watch cache (Feed)
//	authorizer.go  Authorize, RulesFor and RoleRefRules: the bindings of a user, and their roles' rules
//	index.go       the keys bindings are found under: a user, a group, a service account
//	binding.go     a binding of either kind, and how a reason describes it
//	match.go       RuleAllows: whether a rule grants the request
package rbac
