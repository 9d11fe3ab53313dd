package mkube

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// documentedRoots are the top-level folders a learner reads. Every package
// under them (walked, not listed, so that a new package is covered the day
// it appears) must have a package doc comment naming each of its non-test
// files. A root that does not exist yet is skipped.
var documentedRoots = []string{
	"apiserver", "client", "controllermanager", "scheduler",
	"kubelet", "cri", "images", "network", "store", "charts",
}

// TestEveryPackageDocNamesItsFiles fails for every package under
// documentedRoots whose doc comment is missing or does not name one of its
// non-test .go files (doc.go itself excepted), so that a package's map of
// "where things live" cannot drift from its files. It lists every problem
// at once, one line each.
func TestEveryPackageDocNamesItsFiles(t *testing.T) {
	var problems []string
	for _, root := range documentedRoots {
		if _, err := os.Stat(root); os.IsNotExist(err) {
			continue
		}
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				return nil
			}
			if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			p, err := checkPackageDoc(path)
			problems = append(problems, p...)
			return err
		})
		if err != nil {
			t.Fatalf("walk %s: %v", root, err)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Errorf("%d package doc problem(s); name each file in its package's doc comment, with what it holds:\n%s",
			len(problems), strings.Join(problems, "\n"))
	}
}

// checkPackageDoc parses the package clause and comments of the non-test
// files in dir and returns one line per problem found.
func checkPackageDoc(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	var doc strings.Builder
	var docFiles []string
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return nil, err
		}
		files = append(files, name)
		if f.Doc != nil {
			doc.WriteString(f.Doc.Text())
			doc.WriteString("\n")
			docFiles = append(docFiles, name)
		}
	}
	if len(files) == 0 {
		return nil, nil // a folder of tests or data only: no package to document
	}
	pkg := filepath.ToSlash(dir)
	if len(docFiles) == 0 {
		return []string{pkg + ": the package has no doc comment (add one to " + pkg + "/doc.go)"}, nil
	}
	where := pkg + "/" + strings.Join(docFiles, ", ")
	var problems []string
	text := doc.String()
	for _, name := range files {
		if name == "doc.go" || namesFile(text, name) {
			continue
		}
		problems = append(problems, pkg+": "+name+" is not named in the package doc ("+where+")")
	}
	return problems, nil
}

// namesFile reports whether text names the file as a whole word: "status.go"
// is named by "status.go holds ..." but not by "podstatus.go" or
// "jobs_status.go".
func namesFile(text, name string) bool {
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(name) + `($|[^A-Za-z0-9_])`)
	return re.MatchString(text)
}

func TestNamesFileMatchesWholeFileNamesOnly(t *testing.T) {
	tests := []struct {
		name string
		text string
		file string
		want bool
	}{
		{"a name at the start of a table row is named", "status.go  the status manager", "status.go", true},
		{"a name inside a sentence is named", "the loop (see sync.go) runs", "sync.go", true},
		{"a name with a path before it is named", "kubelet/status.go holds it", "status.go", true},
		{"a longer name ending in the same letters is not", "podstatus.go holds it", "status.go", false},
		{"a name with an underscore before it is not", "jobs_status.go holds it", "status.go", false},
		{"the name without its .go is not", "the status manager", "status.go", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := namesFile(tt.text, tt.file); got != tt.want {
				t.Errorf("namesFile(%q, %q) = %v, want %v", tt.text, tt.file, got, tt.want)
			}
		})
	}
}
