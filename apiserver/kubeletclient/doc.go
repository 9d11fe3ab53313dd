// Package kubeletclient is how the API server reaches kubelets
// (kube-apiserver's pkg/kubelet/client): over HTTPS, presenting
// --kubelet-client-certificate and --kubelet-client-key, and verifying the
// kubelet's serving certificate against --kubelet-certificate-authority,
// or, without one, not at all, as kube-apiserver does, since kubelets
// sign their own by default. pods/log, exec, attach and portforward,
// nodes/proxy and the admission webhooks' route to a Service's pod
// (apiserver/webhookclient) all go through it.
//
// The client certificate's user needs rights on the kubelet's port only
// where the kubelet asks the API server (--authorization-mode=Webhook):
// RBAC's system:kubelet-api-admin, which mkube's default policy binds to
// kube-apiserver-kubelet-client, the user of the certificate the API
// server makes for itself (apiserver/pki).
//
// Where things live:
//
//	file          what it holds
//	client.go     Config (the flags), Client: its TLS settings and transport
//	doc.go        this map
package kubeletclient
