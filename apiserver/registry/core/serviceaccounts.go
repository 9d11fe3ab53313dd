package core

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/apiserver"
)

// ServiceAccounts are the identities pods run as (seed 003 §六.3); every
// built-in namespace has its "default" one from the start.
var ServiceAccounts = &apiserver.Resource{
	GroupVersion: v1, Name: "serviceaccounts", Kind: "ServiceAccount", Namespaced: true,
	ShortNames: []string{"sa"},
	// token: the TokenRequest API (serviceaccount_token.go).
	Subresources: []apiserver.Subresource{tokenSubresource},
	New:          func() runtime.Object { return &corev1.ServiceAccount{} },
	NewList:      func() runtime.Object { return &corev1.ServiceAccountList{} },
	Columns:      []apiserver.Column{{Name: "Secrets", Type: "integer"}, {Name: "Age", Type: "string"}},
	Row: func(obj runtime.Object, now time.Time) []any {
		sa := obj.(*corev1.ServiceAccount)
		return []any{int64(len(sa.Secrets)), apiserver.Age(sa.CreationTimestamp, now)}
	},
	Bootstrap: builtinNamespaces(func(ns string) runtime.Object {
		return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
	}),
}
