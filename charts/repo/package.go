package repo

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"time"

	"sigs.k8s.io/yaml"
)

// Chart is one packaged chart.
type Chart struct {
	Name, Version string
	// Metadata is Chart.yaml as it was written: index.yaml repeats it.
	Metadata map[string]any
	// Archive is the .tgz; Digest its SHA-256, in hex.
	Archive []byte
	Digest  string
	// Created is the newest modification time among its files, or the
	// time given to Package when the files have none (embedded files).
	Created time.Time
}

// FileName is the archive's name in the repository, as helm package
// names it.
func (c Chart) FileName() string { return c.Name + "-" + c.Version + ".tgz" }

// Package reads the chart in directory dir of fsys and packages it. Every
// file goes into the archive under NAME/ (Helm reads the first path
// element as the chart's directory, whatever it is called), in the
// order fs.WalkDir visits them, so that the same files give the same
// archive. now stands in for files without a modification time.
func Package(fsys fs.FS, dir string, now time.Time) (Chart, error) {
	raw, err := fs.ReadFile(fsys, path.Join(dir, "Chart.yaml"))
	if err != nil {
		return Chart{}, err
	}
	var meta map[string]any
	if err := yaml.Unmarshal(raw, &meta); err != nil {
		return Chart{}, fmt.Errorf("%s/Chart.yaml: %w", dir, err)
	}
	name, _ := meta["name"].(string)
	version, _ := meta["version"].(string)
	if name == "" || version == "" {
		return Chart{}, fmt.Errorf("%s/Chart.yaml: name and version (a string) are required", dir)
	}
	created, err := newestModTime(fsys, dir)
	if err != nil {
		return Chart{}, err
	}
	if created.IsZero() {
		created = now
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err = fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		rel := p[len(dir)+1:]
		hdr := &tar.Header{Name: name + "/" + rel, Mode: 0o644, Size: int64(len(data)), ModTime: created, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if err != nil {
		return Chart{}, fmt.Errorf("packaging %s: %w", dir, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	return Chart{Name: name, Version: version, Metadata: meta, Archive: buf.Bytes(), Digest: hex.EncodeToString(sum[:]), Created: created.UTC()}, nil
}

// newestModTime is the latest modification time of the files under dir:
// zero for an embedded directory, whose files have none.
func newestModTime(fsys fs.FS, dir string) (time.Time, error) {
	var newest time.Time
	err := fs.WalkDir(fsys, dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.ModTime().After(newest) {
			newest = info.ModTime()
		}
		return nil
	})
	return newest, err
}
