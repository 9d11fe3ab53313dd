package app

import (
	"crypto/x509"
	"fmt"
	"log/slog"
	"strings"

	"github.com/mkube/mkube/apiserver/audit"
	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/authentication/serviceaccount"
	"k8s.io/utils/clock"
)

// AuthenticationOptions are kube-apiserver's authentication and audit
// flags, as cmd/apiserver's flags of the same names give them.
type AuthenticationOptions struct {
	Anonymous      bool   // --anonymous-auth
	TokenAuthFile  string // --token-auth-file
	SigningKeyFile string // --service-account-signing-key-file ("": CERT-DIR/sa.key)
	KeyFiles       string // --service-account-key-file, comma-separated
	Issuer         string // --service-account-issuer
	APIAudiences   string // --api-audiences, comma-separated
	AuditLogPath   string // --audit-log-path
}

// build makes the authenticator the options describe: client certificates
// signed by ca (none if nil), the token file's tokens, then the
// service-account tokens, whose signing key is in certDir unless an
// option names it. A file that cannot be read stops the start, saying
// why.
func (o AuthenticationOptions) build(certDir string, ca *x509.Certificate, clk clock.PassiveClock, log *slog.Logger) (*authentication.Authenticator, *serviceaccount.Tokens, error) {
	a := authentication.New(ca, clk)
	a.Anonymous, a.Log = o.Anonymous, log
	if o.TokenAuthFile != "" {
		file, err := authentication.ReadTokenFile(o.TokenAuthFile, log)
		if err != nil {
			return nil, nil, fmt.Errorf("--token-auth-file: %w", err)
		}
		log.Info("static tokens", "file", o.TokenAuthFile, "tokens", file.Len())
		a.Tokens = append(a.Tokens, file)
	}
	key, keyPath, err := serviceaccount.LoadSigningKey(o.SigningKeyFile, certDir)
	if err != nil {
		return nil, nil, err
	}
	public, err := serviceaccount.ReadPublicKeys(splitList(o.KeyFiles))
	if err != nil {
		return nil, nil, err
	}
	tokens, err := serviceaccount.New(serviceaccount.Config{SigningKey: key, PublicKeys: public, Issuer: o.Issuer,
		APIAudiences: splitList(o.APIAudiences), Clock: clk, Log: log})
	if err != nil {
		return nil, nil, err
	}
	a.Tokens = append(a.Tokens, tokens)
	a.APIAudiences = tokens.APIAudiences()
	log.Info("service account tokens", "signingKey", keyPath, "issuer", tokens.Issuer(), "apiAudiences", strings.Join(a.APIAudiences, ","),
		"anonymousAuth", a.Anonymous)
	return a, tokens, nil
}

// openAudit opens --audit-log-path's log; nil if the option is empty.
func (o AuthenticationOptions) openAudit(log *slog.Logger) (*audit.Logger, error) {
	if o.AuditLogPath == "" {
		return nil, nil
	}
	l, err := audit.Open(o.AuditLogPath, nil, log)
	if err != nil {
		return nil, fmt.Errorf("--audit-log-path: %w", err)
	}
	log.Info("audit log", "path", o.AuditLogPath, "level", "Metadata")
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
