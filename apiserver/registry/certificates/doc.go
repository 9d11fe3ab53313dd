// Package certificates declares certificates.k8s.io/v1
// CertificateSigningRequests: how a client that holds a private key gets a
// certificate from the cluster's CA without ever seeing the CA's key. The
// client posts a PEM certificate request (the API server records who sent
// it, spec.username and groups); somebody allowed to approves or denies
// it through the approval subresource (`kubectl certificate approve`); a
// signer, the controller manager's csrsigning controller for the
// kubernetes.io/ signers, writes the certificate into status.certificate
// through the status subresource.
//
// Where things live:
//
//	file                                  what it holds
//	certificatesigningrequests.go         CertificateSigningRequests: the kind, its admission (spec.username and groups are the sender's), approval and status updates
//	validation.go                         their validation: the PEM request, the signer's name, the usages
//	clustertrustbundles.go                ClusterTrustBundles and their PEM bundles
//	podcertificaterequests.go             PodCertificateRequests: the kind, its status updates, who may sign
//	podcertificaterequests_validation.go  their validation
package certificates
