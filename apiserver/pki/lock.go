package pki

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Lock holds an exclusive lock on dir (a file .lock in it, flock(2))
// until the returned func is called. Several API servers of one cluster
// may share one cert dir (docker-compose.ha.yml's volume, standing in for
// the copy `kubeadm join --control-plane` makes of the first server's
// certificates): started at once, the first to take the lock makes the
// CA, the service-account key and the kubeconfigs, and the others,
// waiting, find them made and reuse them, instead of each making a CA of
// its own.
func Lock(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
