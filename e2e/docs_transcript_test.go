package e2e

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strings"
)

// The docs' transcripts (docs/README.md, "Transcripts that are checked"):
// a fenced block whose info string is "console" is run; in it a line
// starting with "$ " is a command (a trailing backslash continues it on
// the next line) and the lines after it, up to the next command, are what
// it prints. Any other fence is prose for the reader only.

// heredocStart finds a heredoc in a command (`kubectl apply -f - <<EOF`):
// its lines, up to the word, are the command's, not its output.
var heredocStart = regexp.MustCompile(`<<-?\s*'?(\w+)'?\s*(#.*)?$`)

// transcriptBlock is one fenced block of a doc file.
type transcriptBlock struct {
	line     int // of the opening fence, for messages
	checked  bool
	commands []transcriptCommand
}

// transcriptCommand is one "$ " line and the output the doc shows for it.
type transcriptCommand struct {
	line     int
	text     string
	expected []string
}

// readTranscripts returns the fenced blocks of a Markdown file that hold at
// least one command.
func readTranscripts(path string) ([]transcriptBlock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		blocks  []transcriptBlock
		block   *transcriptBlock
		fence   string
		heredoc string // the word that ends the heredoc being read
		n       int
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if block == nil {
			if strings.HasPrefix(trimmed, "```") {
				fence = trimmed[:strings.LastIndex(trimmed, "`")+1]
				info := strings.TrimSpace(strings.TrimPrefix(trimmed, fence))
				block = &transcriptBlock{line: n, checked: info == "console"}
			}
			continue
		}
		if trimmed == fence {
			if len(block.commands) > 0 {
				blocks = append(blocks, *block)
			}
			block = nil
			continue
		}
		cmds := block.commands
		if heredoc != "" { // a manifest typed into the command
			last := &block.commands[len(cmds)-1]
			last.text += "\n" + line
			if trimmed == heredoc {
				heredoc = ""
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "$ "):
			if m := heredocStart.FindStringSubmatch(line); m != nil {
				heredoc = m[1]
			}
			block.commands = append(cmds, transcriptCommand{line: n, text: strings.TrimPrefix(line, "$ ")})
		case len(cmds) > 0 && strings.HasSuffix(cmds[len(cmds)-1].text, `\`) && len(cmds[len(cmds)-1].expected) == 0:
			last := &block.commands[len(cmds)-1]
			last.text = strings.TrimSuffix(last.text, `\`) + " " + strings.TrimSpace(line)
		case len(cmds) > 0:
			last := &block.commands[len(cmds)-1]
			last.expected = append(last.expected, line)
		}
	}
	return blocks, sc.Err()
}

// volatile are the parts of an output that differ from run to run, each
// replaced by a placeholder, in the doc and in what the command printed
// alike. Order matters: UIDs before the shorter hex IDs, timestamps before
// ages.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "<uid>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?`), "<time>"},
	{regexp.MustCompile(`\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d [+-]\d{4}`), "<time>"},
	{regexp.MustCompile(`\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \w+ \d{4}`), "<time>"},
	{regexp.MustCompile(`\d{4}/\d\d/\d\d \d\d:\d\d:\d\d`), "<time>"},
	{regexp.MustCompile(`\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}`), "<time>"},
	{regexp.MustCompile(`\b\d\d:\d\d:\d\d(\.\d+)?\b`), "<time>"},
	{regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}(/\d+)?(:\d+)?\b`), "<ip>"},
	{regexp.MustCompile(`"resourceVersion":"\d+"`), `"resourceVersion":"<rv>"`},
	{regexp.MustCompile(`\brv=\d+`), "rv=<rv>"},
	{regexp.MustCompile(`\b[0-9a-f]{12,64}\b`), "<id>"},
	{regexp.MustCompile(`\.[0-9a-f]{16}\b`), ".<id>"},
	// Generated names: Kubernetes' random suffixes and pod-template
	// hashes use an alphabet without vowels (and 0, 1, 3), so words
	// such as "-never" or "-node01" are left alone.
	{regexp.MustCompile(`-[bcdfghjklmnpqrstvwxz2456789]{5,10}\b`), "-<id>"},
	{regexp.MustCompile(`\b\d+(\.\d+)?(ms|µs|s|m|h|d)(\d+(s|m|h))?\b`), "<age>"},
	{regexp.MustCompile(`\b\d+ \(<age> ago\)`), "<n> (<age> ago)"},
	{regexp.MustCompile(`\(x\d+ over <age>\)`), "(x<n> over <age>)"},
	{regexp.MustCompile(`[ \t]+`), " "},
}

// normalise replaces the volatile parts of a line and trims it.
func normalise(line string) string {
	for _, v := range volatile {
		line = v.re.ReplaceAllString(line, v.with)
	}
	return strings.TrimSpace(line)
}

// anyLines is the expected line that stands for any number of lines.
const anyLines = "..."

// expectedLine is one line of a doc's output as a pattern: normalised,
// with "…" and "..." matching any text.
func expectedLine(line string) *regexp.Regexp {
	line = strings.ReplaceAll(normalise(line), "…", "...")
	parts := strings.Split(line, "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// trimBlank drops the blank lines at the end.
func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// matchOutput says whether what a command printed matches what the doc
// shows.
func matchOutput(expected []string, output string) bool {
	exp := trimBlank(expected)
	got := trimBlank(strings.Split(strings.TrimRight(output, "\n"), "\n"))
	for i := range got {
		got[i] = normalise(got[i])
	}
	pats := make([]*regexp.Regexp, len(exp))
	for i, e := range exp {
		if strings.TrimSpace(e) != anyLines {
			pats[i] = expectedLine(e)
		}
	}
	if matchFrom(pats, got) {
		return true
	}
	return sameRows(exp, got)
}

// sameRows matches a table whose rows come in another order: the header
// (the first line) where it was, the other lines the same but in any
// order, so which of three pods a scheduler put on node02 does not matter.
// Only an output the doc shows in full (no "..." nor "…") is matched so.
func sameRows(expected, got []string) bool {
	if len(expected) != len(got) || len(got) < 2 {
		return false
	}
	want := make([]string, len(expected))
	for i, e := range expected {
		if strings.Contains(e, "...") || strings.Contains(e, "…") {
			return false
		}
		want[i] = normalise(e)
	}
	if want[0] != got[0] {
		return false
	}
	rest := slices.Clone(got[1:])
	slices.Sort(want[1:])
	slices.Sort(rest)
	return slices.Equal(want[1:], rest)
}

// matchFrom matches patterns against lines; a nil pattern ("...") takes
// any number of lines.
func matchFrom(pats []*regexp.Regexp, lines []string) bool {
	if len(pats) == 0 {
		return len(lines) == 0
	}
	if pats[0] == nil {
		for skip := 0; skip <= len(lines); skip++ {
			if matchFrom(pats[1:], lines[skip:]) {
				return true
			}
		}
		return false
	}
	return len(lines) > 0 && pats[0].MatchString(lines[0]) && matchFrom(pats[1:], lines[1:])
}

// readOnly says whether a command only reads the cluster, so that running
// it again until its output matches changes nothing: the doc shows a state
// the cluster reaches, and the test waits for it.
func readOnly(command string) bool {
	fields := strings.Fields(command)
	if len(fields) == 0 {
		return false
	}
	switch strings.TrimPrefix(fields[0], "bin/") {
	case "kubectl", "k":
		for _, f := range fields[1:] {
			if strings.HasPrefix(f, "-") {
				continue
			}
			switch f {
			case "get", "describe", "logs", "exec", "explain", "auth", "api-resources", "api-versions", "top":
				return true
			}
			return false
		}
	case "mkube":
		return len(fields) > 1 && (fields[1] == "explain" || fields[1] == "inspect")
	case "curl":
		return !strings.Contains(command, " -X ")
	case "cat", "ls":
		return true
	case "helm":
		return len(fields) > 1 && slices.Contains([]string{"list", "ls", "status", "history", "search", "show", "get"}, fields[1])
	}
	return false
}
