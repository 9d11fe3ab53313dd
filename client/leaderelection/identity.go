package leaderelection

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/util/uuid"
)

// Identity is a candidate's holderIdentity as kube-scheduler and
// kube-controller-manager write it: the host's name, for the reader of
// `kubectl get leases -n kube-system`, then "_" and a fresh UUID, so that
// two candidates on one host, or a process restarted on it, are never
// taken for each other (a restarted process that kept its old name would
// believe it still held a Lease it never renewed).
func Identity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("leader election identity: %w", err)
	}
	return host + "_" + string(uuid.NewUUID()), nil
}
