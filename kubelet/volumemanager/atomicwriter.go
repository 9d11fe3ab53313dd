package volumemanager

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// WriteAtomically makes dir hold exactly payload (relative path → file),
// as the kubelet's AtomicWriter does for ConfigMap, Secret, downward API
// and projected volumes, so that a reader never sees half an update:
//
//	dir/..2026_12_01_14_00_00.123456789/<files>   this version
//	dir/..data -> ..2026_12_01_14_00_00.123456789 the current version
//	dir/<name> -> ..data/<name>                   each top-level name
//
// An update writes a new version beside the old, then swaps ..data with
// one rename (atomic), then fixes the top-level links and removes the old
// version. It reports whether anything changed.
func WriteAtomically(dir string, payload map[string]File, now time.Time) (bool, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	dataLink := filepath.Join(dir, "..data")
	old, _ := os.Readlink(dataLink)
	if old != "" && samePayload(filepath.Join(dir, old), payload) {
		return false, nil
	}
	version := now.UTC().Format("..2006_01_02_15_04_05.000000000")
	tsDir := filepath.Join(dir, version)
	if err := os.MkdirAll(tsDir, 0o755); err != nil {
		return false, err
	}
	for name, f := range payload {
		p := filepath.Join(tsDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return false, err
		}
		if err := os.WriteFile(p, f.Data, 0o600); err != nil {
			return false, err
		}
		if err := os.Chmod(p, f.Mode); err != nil {
			return false, err
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	os.Remove(tmp)
	if err := os.Symlink(version, tmp); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, dataLink); err != nil {
		return false, err
	}
	// The top-level names: a link for each, none for names gone.
	want := map[string]bool{}
	for name := range payload {
		want[strings.SplitN(name, "/", 2)[0]] = true
	}
	for top := range want {
		link := filepath.Join(dir, top)
		if target, err := os.Readlink(link); err == nil && target == filepath.Join("..data", top) {
			continue
		}
		os.RemoveAll(link)
		if err := os.Symlink(filepath.Join("..data", top), link); err != nil {
			return false, err
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "..") && !want[e.Name()] {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
	if old != "" && old != version {
		os.RemoveAll(filepath.Join(dir, old))
	}
	return true, nil
}

// File is one file of a volume's payload.
type File struct {
	Data []byte
	Mode os.FileMode
}

// samePayload: the version in dir holds exactly payload.
func samePayload(dir string, payload map[string]File) bool {
	var have []string
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			have = append(have, filepath.ToSlash(rel))
		}
		return nil
	})
	if len(have) != len(payload) {
		return false
	}
	sort.Strings(have)
	for _, name := range have {
		f, ok := payload[name]
		if !ok {
			return false
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		data, err := os.ReadFile(p)
		fi, serr := os.Stat(p)
		if err != nil || serr != nil || !bytes.Equal(data, f.Data) || fi.Mode().Perm() != f.Mode.Perm() {
			return false
		}
	}
	return true
}

// ValidPayloadPath is Kubernetes' rule for a volume item's path:
// relative, without "..", not empty.
func ValidPayloadPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("invalid path: must not be empty")
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("invalid path %q: must be relative", p)
	case strings.Contains("/"+p+"/", "/../") || strings.HasPrefix(p, ".."):
		return fmt.Errorf("invalid path %q: must not contain '..'", p)
	}
	return nil
}
