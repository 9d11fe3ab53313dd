// Package webhook calls the cluster's admission webhooks: the
// MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins of the
// admission chain (apiserver/admission/webhooks.go), as Kubernetes'
// k8s.io/apiserver/pkg/admission/plugin/webhook does. For one write:
//
//  1. source.go: the webhooks are read from an in-memory copy of the
//     MutatingWebhookConfigurations and ValidatingWebhookConfigurations,
//     which the API server keeps current from its own watch cache
//     (Server.Follow): a new configuration is in effect within a moment
//     of being stored, with no read of etcd per request.
//  2. match.go: each webhook is matched against the request: its rules
//     (operations, API groups, versions, resources with subresources,
//     scope), then, with matchPolicy Equivalent, the same rules against
//     the other versions the resource is served at; its namespaceSelector
//     against the labels of the request's namespace, its objectSelector
//     against the object's (or the old object's) labels, and its CEL
//     matchConditions (conditions.go).
//  3. review.go: a matching webhook is sent an AdmissionReview (v1 or
//     v1beta1, the first of its admissionReviewVersions this server
//     speaks) by HTTPS POST (apiserver/webhookclient), to its clientConfig.url or to its
//     Service, which the API server reaches through the node of one of
//     the Service's ready pods (webhookclient/dial.go).
//  4. dispatch.go: the answers. A mutating webhook's JSON patch is
//     applied and the object read back as the kind's own (decoded,
//     pruned, defaulted) before the next webhook sees it; webhooks with
//     reinvocationPolicy IfNeeded are called once more if a later one
//     changed the object. Validating webhooks are called all at once. A
//     refusal is the webhook's Status, "admission webhook "x" denied the
//     request: ..."; a webhook that cannot be called (refused connection,
//     bad certificate, timeout, a malformed answer) fails the request,
//     "failed calling webhook ...", unless its failurePolicy is Ignore.
//
// Webhook configurations and admission policies are never sent to
// webhooks, so that a broken webhook can always be deleted.
package webhook
