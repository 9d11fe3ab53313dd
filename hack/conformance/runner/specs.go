package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// spec is one ginkgo spec of the suite, by its full text: its containers'
// texts and its own, joined by spaces, which is what --ginkgo.focus
// matches.
type spec struct {
	Name   string
	Serial bool
	// Slow specs (labelled [Slow]) wait on the cluster's own clocks, such
	// as the API server's etcd compaction every 5 minutes, so they get the
	// longer timeout.
	Slow bool
}

// sig is the spec's SIG, "[sig-apps]", from its leading tag.
func (s spec) sig() string {
	if m := sigTag.FindString(s.Name); m != "" {
		return m
	}
	return "[other]"
}

var sigTag = regexp.MustCompile(`^\[sig-[a-z-]+\]`)

// listSpecs asks the suite, in a dry run, which specs focus selects and
// skip does not.
func listSpecs(e2e, kubeconfig, dir, focus, skip string) ([]spec, error) {
	report := filepath.Join(dir, "dry-run.json")
	args := []string{"--kubeconfig", kubeconfig, "--provider", "skeleton", "--ginkgo.dry-run", "--ginkgo.focus", focus,
		"--ginkgo.json-report", report, "--ginkgo.no-color"}
	if skip != "" {
		args = append(args, "--ginkgo.skip", skip)
	}
	out, err := exec.Command(e2e, args...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("dry run: %w\n%s", err, tail(string(out), 20))
	}
	data, err := os.ReadFile(report)
	if err != nil {
		return nil, err
	}
	var reports []struct {
		SpecReports []struct {
			ContainerHierarchyTexts  []string
			ContainerHierarchyLabels [][]string
			LeafNodeLabels           []string
			LeafNodeText             string
			LeafNodeType             string
			State                    string
			IsSerial                 bool
		}
	}
	if err := json.Unmarshal(data, &reports); err != nil {
		return nil, fmt.Errorf("dry-run report: %w", err)
	}
	var specs []spec
	for _, r := range reports {
		for _, sr := range r.SpecReports {
			if sr.LeafNodeType != "It" || sr.State != "passed" { // a dry run "passes" what it would run
				continue
			}
			name := strings.Join(append(append([]string{}, sr.ContainerHierarchyTexts...), sr.LeafNodeText), " ")
			labels := slices.Concat(append(sr.ContainerHierarchyLabels, sr.LeafNodeLabels)...)
			specs = append(specs, spec{Name: name, Serial: sr.IsSerial || slices.Contains(labels, "Serial") || strings.Contains(name, "[Serial]"),
				Slow: slices.Contains(labels, "Slow") || strings.Contains(name, "[Slow]")})
		}
	}
	return specs, nil
}

// focusOn is a --ginkgo.focus for exactly s: ginkgo matches the suite's
// description, a space and the spec's full text, so anchoring on the
// space before the name keeps a spec whose name ends another's out.
func focusOn(s spec) string { return " " + regexp.QuoteMeta(s.Name) + "$" }

// verdict is how one spec's process ended.
type verdict struct {
	State    string // PASS, FAIL, SKIP
	Message  string // the failure's first line
	Duration time.Duration
}

// runSpec runs one spec in a process of its own, its report and output
// in dir; the verdict is the report's (junit_01.xml).
func runSpec(e2e, kubeconfig, dir string, s spec, timeout time.Duration) verdict {
	start := time.Now()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return verdict{State: "FAIL", Message: err.Error()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e2e, "--kubeconfig", kubeconfig, "--provider", "skeleton",
		"--ginkgo.focus", focusOn(s), "--ginkgo.timeout", timeout.String(),
		"--ginkgo.no-color", "--report-dir", dir, "--disable-log-dump")
	out, _ := cmd.CombinedOutput() // the report, not the exit code, says what happened
	os.WriteFile(filepath.Join(dir, "output.log"), out, 0o644)
	v := readJUnit(filepath.Join(dir, "junit_01.xml"))
	if v.State == "" {
		v = verdict{State: "FAIL", Message: "no report: " + firstLine(tail(string(out), 5))}
	}
	v.Duration = time.Since(start)
	return v
}

// readJUnit: any failed or errored case (the spec, or the suite's setup)
// fails it; a skipped spec with no failure is SKIP; else PASS.
func readJUnit(path string) verdict {
	data, err := os.ReadFile(path)
	if err != nil {
		return verdict{}
	}
	var suites struct {
		Suites []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if xml.Unmarshal(data, &suites) != nil {
		return verdict{}
	}
	v := verdict{State: "PASS"}
	ran := false
	for _, s := range suites.Suites {
		for _, c := range s.Cases {
			switch {
			case c.Failure != nil:
				return verdict{State: "FAIL", Message: firstLine(c.Failure.Message + "\n" + c.Failure.Text)}
			case c.Error != nil:
				return verdict{State: "FAIL", Message: firstLine(c.Error.Message)}
			case c.Skipped == nil && strings.HasPrefix(c.Name, "[It]"):
				ran = true
			}
		}
	}
	if !ran {
		v.State = "SKIP"
	}
	return v
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 200 {
				l = l[:200] + "..."
			}
			return l
		}
	}
	return ""
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
