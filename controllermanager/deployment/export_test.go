package deployment

// TemplateHash lets the end-to-end test (package deployment_test) check that
// a ReplicaSet is named after the hash of the template the server stored.
var TemplateHash = templateHash
