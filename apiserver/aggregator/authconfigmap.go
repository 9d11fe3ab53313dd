package aggregator

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/apiserver"
)

// AuthenticationConfigMap names the ConfigMap in which kube-apiserver
// tells the API servers behind it how to authenticate the requests it
// proxies (its ClusterAuthenticationTrustController): the CA of client
// certificates, and the front proxy's CA, allowed names and headers.
// An aggregated server reads it with the Role
// extension-apiserver-authentication-reader.
const (
	AuthenticationConfigMapNamespace = metav1.NamespaceSystem
	AuthenticationConfigMapName      = "extension-apiserver-authentication"
)

// PublishAuthentication writes kube-system/extension-apiserver-authentication
// for clientCA (nil: no client certificates) and frontProxyCA (nil: no
// front proxy), in kube-apiserver's keys: the CAs as PEM, the lists as
// JSON arrays. It is written at start, created or put right; kube-apiserver
// also puts it right every minute, which mkube does not.
func PublishAuthentication(ctx context.Context, configMaps *apiserver.Storage, clientCA, frontProxyCA *x509.Certificate) error {
	data := map[string]string{}
	if clientCA != nil {
		data["client-ca-file"] = pemOf(clientCA)
	}
	if frontProxyCA != nil {
		data["requestheader-client-ca-file"] = pemOf(frontProxyCA)
		for key, list := range map[string][]string{
			"requestheader-allowed-names":        {"front-proxy-client"},
			"requestheader-username-headers":     {userHeader},
			"requestheader-uid-headers":          {uidHeader},
			"requestheader-group-headers":        {groupHeader},
			"requestheader-extra-headers-prefix": {extraHeaderPrefix},
		} {
			encoded, _ := json.Marshal(list)
			data[key] = string(encoded)
		}
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: AuthenticationConfigMapNamespace, Name: AuthenticationConfigMapName}, Data: data}
	_, err := configMaps.Create(ctx, cm)
	if apierrors.IsAlreadyExists(err) {
		_, err = configMaps.Update(ctx, cm.Namespace, cm.Name, func(obj runtime.Object) (runtime.Object, error) {
			cur := obj.(*corev1.ConfigMap)
			cur.Data = data
			return cur, nil
		})
	}
	if err != nil {
		return fmt.Errorf("publish %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return nil
}

func pemOf(cert *x509.Certificate) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}))
}
