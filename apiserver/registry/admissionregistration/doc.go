// Package admissionregistration declares admissionregistration.k8s.io/v1,
// the kinds with which a cluster extends its own admission chain:
//
//   - MutatingWebhookConfigurations and ValidatingWebhookConfigurations
//     name HTTPS servers the API server calls for every write their rules
//     match, after its built-in admission plugins (apiserver/admission):
//     the mutating ones may change the object with a JSON patch, the
//     validating ones may only refuse it. The calling is in
//     apiserver/admission/webhook; this package is what is stored, with
//     Kubernetes' defaults (failurePolicy Fail, matchPolicy Equivalent,
//     timeoutSeconds 10, ...) and validation, in Kubernetes' words.
//   - ValidatingAdmissionPolicies, MutatingAdmissionPolicies and their
//     bindings: the same extension written as CEL expressions the API
//     server evaluates itself. Their expressions are compiled when they
//     are written, so a typo is refused as Kubernetes refuses it. Bound
//     policies are evaluated by apiserver/admission/policy.
//
// None of these objects is ever sent to a webhook (the webhook package
// exempts them), so that a broken webhook cannot stop its own repair.
//
// Where things live:
//
//	file                      what it holds
//	webhookconfigurations.go  the two webhook configuration kinds and their defaults
//	webhook_validation.go     their validation
//	policies.go               the four policy kinds and their defaults
//	policy_validation.go      their validation, which compiles every expression
//	cel.go                    the expressions as the CEL compiler takes them, with the return types each field must have
package admissionregistration
