package kubelet

import apierrors "k8s.io/apimachinery/pkg/api/errors"

// conflictRetries bounds retryOnConflict. It is the kubelet's
// nodeStatusUpdateRetry: five conflicts in a row mean something is wrong,
// and the next heartbeat or queue retry will try again anyway.
const conflictRetries = 5

// retryOnConflict runs fn until it succeeds, fails with something other
// than 409 Conflict, or has run conflictRetries times (client-go's
// retry.RetryOnConflict). A conflict means somebody wrote the object since
// fn read it, so fn must read it again each time.
func retryOnConflict(fn func() error) error {
	var err error
	for range conflictRetries {
		if err = fn(); !apierrors.IsConflict(err) {
			return err
		}
	}
	return err
}
