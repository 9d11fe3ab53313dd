package main

import (
	"flag"

	"github.com/mkube/mkube/apiserver/app"
	"github.com/mkube/mkube/apiserver/authentication/serviceaccount"
)

// registerAuthnFlags registers kube-apiserver's authentication and audit
// flags, to be read into o.
func registerAuthnFlags(o *app.AuthenticationOptions) {
	flag.BoolVar(&o.Anonymous, "anonymous-auth", true, "a request with no credential is system:anonymous, in system:unauthenticated (RBAC decides what it may do); false makes it 401 Unauthorized")
	flag.StringVar(&o.TokenAuthFile, "token-auth-file", "", "a CSV file of static bearer tokens: token,user,uid,\"group1,group2\"")
	flag.StringVar(&o.SigningKeyFile, "service-account-signing-key-file", "", "the private key (PEM) that signs service-account tokens (default CERT-DIR/"+serviceaccount.SigningKeyName+", made at the first start)")
	flag.StringVar(&o.KeyFiles, "service-account-key-file", "", "comma-separated PEM files of more public keys that service-account tokens may be signed with")
	flag.StringVar(&o.Issuer, "service-account-issuer", serviceaccount.DefaultIssuer, "the iss of the service-account tokens this server issues, and the only one it accepts")
	flag.StringVar(&o.APIAudiences, "api-audiences", "", "comma-separated audiences a token must be for to be accepted (default: the issuer)")
	flag.StringVar(&o.AuditLogPath, "audit-log-path", "", "write an audit.k8s.io/v1 Event per request to this file as JSON lines ('-' is standard output); empty logs nothing")
}
