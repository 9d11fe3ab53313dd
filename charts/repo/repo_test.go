package repo

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/mkube/mkube/charts"
)

var now = time.Date(2026, 12, 7, 18, 0, 0, 0, time.UTC)

// untar lists an archive's files and their contents.
func untar(t *testing.T, archive []byte) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string]string{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = string(data)
	}
}

func TestPackageKeepsEveryFileUnderTheChartsName(t *testing.T) {
	mtime := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	fsys := fstest.MapFS{
		"src/Chart.yaml":               {Data: []byte("apiVersion: v2\nname: demo\nversion: 0.1.0\n"), ModTime: mtime},
		"src/values.yaml":              {Data: []byte("a: 1\n"), ModTime: mtime.Add(-time.Hour)},
		"src/templates/_helpers.tpl":   {Data: []byte("{{/* */}}"), ModTime: mtime},
		"src/templates/configmap.yaml": {Data: []byte("kind: ConfigMap\n"), ModTime: mtime},
	}
	c, err := Package(fsys, "src", now)
	if err != nil {
		t.Fatal(err)
	}
	if c.FileName() != "demo-0.1.0.tgz" {
		t.Errorf("file name %q, want demo-0.1.0.tgz", c.FileName())
	}
	if !c.Created.Equal(mtime) {
		t.Errorf("created %v, want the newest file's time %v", c.Created, mtime)
	}
	files := untar(t, c.Archive)
	for name, f := range fsys {
		inTar := "demo/" + name[len("src/"):]
		if files[inTar] != string(f.Data) {
			t.Errorf("%s in the archive is %q, want %q (archive: %v)", inTar, files[inTar], f.Data, files)
		}
	}
	if len(files) != len(fsys) {
		t.Errorf("archive has %d files, want %d: %v", len(files), len(fsys), files)
	}
	sum := sha256.Sum256(c.Archive)
	if c.Digest != hex.EncodeToString(sum[:]) {
		t.Errorf("digest %s is not the archive's sha256", c.Digest)
	}
	again, _ := Package(fsys, "src", now.Add(time.Hour))
	if again.Digest != c.Digest {
		t.Error("the same files packaged twice differ")
	}
}

func TestPackageRefusesAChartWithoutAVersion(t *testing.T) {
	fsys := fstest.MapFS{"x/Chart.yaml": {Data: []byte("apiVersion: v2\nname: x\n")}}
	if _, err := Package(fsys, "x", now); err == nil {
		t.Fatal("packaged a chart without a version")
	}
}

// TestServerServesMkubesCharts serves the embedded charts and reads them
// as Helm does: index.yaml, then each entry's URL, whose digest must match.
func TestServerServesMkubesCharts(t *testing.T) {
	s, err := New(charts.FS, now)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	get := func(path string) (int, []byte) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	code, body := get("/index.yaml")
	if code != 200 {
		t.Fatalf("GET /index.yaml: %d", code)
	}
	var idx struct {
		APIVersion string `json:"apiVersion"`
		Entries    map[string][]struct {
			APIVersion, Name, Version, Digest string
			Created                           time.Time
			URLs                              []string
		}
	}
	if err := yaml.Unmarshal(body, &idx); err != nil {
		t.Fatalf("%v in\n%s", err, body)
	}
	if idx.APIVersion != "v1" {
		t.Errorf("apiVersion %q", idx.APIVersion)
	}
	for _, name := range []string{"mysql", "nginx", "guestbook"} {
		versions := idx.Entries[name]
		if len(versions) != 1 {
			t.Errorf("%s: %d versions in the index, want 1:\n%s", name, len(versions), body)
			continue
		}
		e := versions[0]
		if e.APIVersion != "v2" || e.Version == "" || len(e.URLs) != 1 || !e.Created.Equal(now) {
			t.Errorf("%s: entry %+v", name, e)
			continue
		}
		code, archive := get("/" + e.URLs[0])
		if code != 200 {
			t.Errorf("GET /%s: %d", e.URLs[0], code)
			continue
		}
		sum := sha256.Sum256(archive)
		if hex.EncodeToString(sum[:]) != e.Digest {
			t.Errorf("%s: the archive's digest differs from the index's", name)
		}
		files := untar(t, archive)
		for _, f := range []string{"/Chart.yaml", "/values.yaml", "/templates/NOTES.txt", "/templates/_helpers.tpl"} {
			if _, ok := files[name+f]; !ok {
				t.Errorf("%s: no %s%s in the archive", name, name, f)
			}
		}
	}
	if code, _ := get("/nothing-1.0.0.tgz"); code != 404 {
		t.Errorf("GET of a chart not served: %d, want 404", code)
	}
	resp, err := http.Post(srv.URL+"/index.yaml", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
}
