package main

import (
	"crypto/x509"
	"flag"
	"fmt"
	"log/slog"
	"strings"

	"github.com/mkube/mkube/apiserver/audit"
	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/authentication/serviceaccount"
)

// authnFlags are kube-apiserver's authentication and audit flags.
type authnFlags struct {
	anonymous      *bool
	tokenAuthFile  *string
	signingKeyFile *string
	keyFiles       *string
	issuer         *string
	apiAudiences   *string
	auditLogPath   *string
}

func registerAuthnFlags() *authnFlags {
	return &authnFlags{
		anonymous:      flag.Bool("anonymous-auth", true, "a request with no credential is system:anonymous, in system:unauthenticated (RBAC decides what it may do); false makes it 401 Unauthorized"),
		tokenAuthFile:  flag.String("token-auth-file", "", "a CSV file of static bearer tokens: token,user,uid,\"group1,group2\""),
		signingKeyFile: flag.String("service-account-signing-key-file", "", "the private key (PEM) that signs service-account tokens (default CERT-DIR/"+serviceaccount.SigningKeyName+", made at the first start)"),
		keyFiles:       flag.String("service-account-key-file", "", "comma-separated PEM files of more public keys that service-account tokens may be signed with"),
		issuer:         flag.String("service-account-issuer", serviceaccount.DefaultIssuer, "the iss of the service-account tokens this server issues, and the only one it accepts"),
		apiAudiences:   flag.String("api-audiences", "", "comma-separated audiences a token must be for to be accepted (default: the issuer)"),
		auditLogPath:   flag.String("audit-log-path", "", "write an audit.k8s.io/v1 Event per request to this file as JSON lines ('-' is standard output); empty logs nothing"),
	}
}

// build makes the authenticator the flags describe: client certificates
// signed by ca (none if nil), the token file's tokens, then the
// service-account tokens, whose signing key is in certDir unless a flag
// names it. A file that cannot be read stops the start, saying why.
func (f *authnFlags) build(certDir string, ca *x509.Certificate, log *slog.Logger) (*authentication.Authenticator, *serviceaccount.Tokens, error) {
	a := authentication.New(ca, nil)
	a.Anonymous, a.Log = *f.anonymous, log
	if *f.tokenAuthFile != "" {
		file, err := authentication.ReadTokenFile(*f.tokenAuthFile, log)
		if err != nil {
			return nil, nil, fmt.Errorf("--token-auth-file: %w", err)
		}
		log.Info("static tokens", "file", *f.tokenAuthFile, "tokens", file.Len())
		a.Tokens = append(a.Tokens, file)
	}
	key, keyPath, err := serviceaccount.LoadSigningKey(*f.signingKeyFile, certDir)
	if err != nil {
		return nil, nil, err
	}
	public, err := serviceaccount.ReadPublicKeys(splitList(*f.keyFiles))
	if err != nil {
		return nil, nil, err
	}
	tokens, err := serviceaccount.New(serviceaccount.Config{SigningKey: key, PublicKeys: public, Issuer: *f.issuer,
		APIAudiences: splitList(*f.apiAudiences), Log: log})
	if err != nil {
		return nil, nil, err
	}
	a.Tokens = append(a.Tokens, tokens)
	a.APIAudiences = tokens.APIAudiences()
	log.Info("service account tokens", "signingKey", keyPath, "issuer", tokens.Issuer(), "apiAudiences", strings.Join(a.APIAudiences, ","),
		"anonymousAuth", a.Anonymous)
	return a, tokens, nil
}

// openAudit opens --audit-log-path's log; nil if the flag is empty.
func (f *authnFlags) openAudit(log *slog.Logger) (*audit.Logger, error) {
	if *f.auditLogPath == "" {
		return nil, nil
	}
	l, err := audit.Open(*f.auditLogPath, nil, log)
	if err != nil {
		return nil, fmt.Errorf("--audit-log-path: %w", err)
	}
	log.Info("audit log", "path", *f.auditLogPath, "level", "Metadata")
	return l, nil
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
