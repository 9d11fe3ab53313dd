package shell

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// The text programs scripts pipe through: wc, grep, cut and a small awk, as
// Kubernetes' restart test counts its runs with
// `wc -l $f | awk {'print $1'}`.

// inputOf reads the named files, or standard input without any ("-" is
// it too), as one text; a file that cannot be read is reported as
// "<prog>: <name>: No such file or directory".
func (p *Process) inputOf(ctx context.Context, prog string, names []string) ([]string, []string, int) {
	if len(names) == 0 {
		names = []string{"-"}
	}
	var texts, read []string
	code := 0
	for _, name := range names {
		if name == "-" {
			data, _ := io.ReadAll(p.stdin(ctx))
			texts, read = append(texts, string(data)), append(read, name)
			continue
		}
		data, err := p.FS.ReadFile(name)
		if err != nil {
			fmt.Fprintf(p.Stderr, "%s: %s: %s\n", prog, name, describe(err))
			code = 1
			continue
		}
		texts, read = append(texts, string(data)), append(read, name)
	}
	return texts, read, code
}

// wc [-l] [-w] [-c] [FILE]... is busybox's: lines, words and bytes of
// each file (all three without flags). One count of one file (or of the
// standard input) is printed bare, "3 /f"; several are right-aligned in
// columns of 9.
func wc(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	set, names := flags(args, "lwcm")
	if set['m'] {
		set['c'] = true
	}
	if !set['l'] && !set['w'] && !set['c'] {
		set['l'], set['w'], set['c'] = true, true, true
	}
	fromStdin := len(names) == 0
	texts, read, code := p.inputOf(ctx, "wc", names)
	one := len(texts) == 1 && (btoi(set['l'])+btoi(set['w'])+btoi(set['c'])) == 1
	var total [3]int
	line := func(counts [3]int, name string) {
		var cols []string
		for i, f := range []byte("lwc") {
			if !set[f] {
				continue
			}
			if one {
				cols = append(cols, strconv.Itoa(counts[i]))
			} else {
				cols = append(cols, fmt.Sprintf("%9d", counts[i]))
			}
		}
		s := strings.Join(cols, " ")
		if !fromStdin {
			s += " " + name
		}
		fmt.Fprintln(out, s)
	}
	for i, text := range texts {
		counts := [3]int{strings.Count(text, "\n"), len(strings.Fields(text)), len(text)}
		for j := range total {
			total[j] += counts[j]
		}
		line(counts, read[i])
	}
	if len(texts) > 1 {
		line(total, "total")
	}
	return code, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// awk [-F SEP] 'PROGRAM' [FILE]... runs the one kind of program scripts
// give it: `{ print ITEM, ITEM ... }` for every input line, where an item
// is a field ($1, $NF, $0), NF, NR or a "string", items side by side are
// joined, and commas put a space between them; `{ print }` prints the
// line. Anything else is a syntax error, as awk would say of a program it
// cannot parse.
func awk(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	sep := ""
	for len(args) > 0 && strings.HasPrefix(args[0], "-F") {
		if sep = strings.TrimPrefix(args[0], "-F"); sep == "" && len(args) > 1 {
			sep, args = args[1], args[1:]
		}
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(p.Stderr, "Usage: awk [OPTIONS] [AWK_PROGRAM] [FILE]...")
		return 1, nil
	}
	items, ok := parseAwkPrint(args[0])
	if !ok {
		fmt.Fprintf(p.Stderr, "awk: cmd. line:1: %s\nawk: cmd. line:1: syntax error (only { print ... } is simulated)\n", args[0])
		return 2, nil
	}
	texts, _, code := p.inputOf(ctx, "awk", args[1:])
	nr := 0
	for _, text := range texts {
		for _, line := range strings.SplitAfter(text, "\n") {
			if line == "" {
				continue
			}
			line = strings.TrimSuffix(line, "\n")
			nr++
			var fields []string
			if sep == "" {
				fields = strings.Fields(line)
			} else {
				fields = strings.Split(line, sep)
			}
			fmt.Fprintln(out, evalAwkPrint(items, line, fields, nr))
		}
	}
	return code, nil
}

// awkItem is one item of a print: a field number, NF, NR, a string, or
// the comma between items.
type awkItem struct {
	kind  string // "field", "fieldNF", "NF", "NR", "string", ","
	n     int
	value string
}

// parseAwkPrint parses `{ print ... }`.
func parseAwkPrint(prog string) ([]awkItem, bool) {
	prog = strings.TrimSpace(prog)
	if !strings.HasPrefix(prog, "{") || !strings.HasSuffix(prog, "}") {
		return nil, false
	}
	body := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(prog, "{"), "}"))
	body = strings.TrimSpace(strings.TrimSuffix(body, ";"))
	rest, ok := strings.CutPrefix(body, "print")
	if !ok || (rest != "" && !unicode.IsSpace(rune(rest[0]))) {
		return nil, false
	}
	var items []awkItem
	for s := strings.TrimSpace(rest); s != ""; s = strings.TrimSpace(s) {
		switch {
		case s[0] == ',':
			items, s = append(items, awkItem{kind: ","}), s[1:]
		case s[0] == '"':
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				return nil, false
			}
			items, s = append(items, awkItem{kind: "string", value: s[1 : end+1]}), s[end+2:]
		case strings.HasPrefix(s, "$NF"):
			items, s = append(items, awkItem{kind: "fieldNF"}), s[3:]
		case s[0] == '$':
			i := 1
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			n, err := strconv.Atoi(s[1:i])
			if err != nil {
				return nil, false
			}
			items, s = append(items, awkItem{kind: "field", n: n}), s[i:]
		case strings.HasPrefix(s, "NF"):
			items, s = append(items, awkItem{kind: "NF"}), s[2:]
		case strings.HasPrefix(s, "NR"):
			items, s = append(items, awkItem{kind: "NR"}), s[2:]
		default:
			return nil, false
		}
	}
	return items, true
}

// evalAwkPrint is what print prints for one line: $0 without items.
func evalAwkPrint(items []awkItem, line string, fields []string, nr int) string {
	if len(items) == 0 {
		return line
	}
	field := func(n int) string {
		switch {
		case n == 0:
			return line
		case n <= len(fields):
			return fields[n-1]
		}
		return ""
	}
	var b strings.Builder
	for _, it := range items {
		switch it.kind {
		case ",":
			b.WriteByte(' ') // OFS
		case "string":
			b.WriteString(it.value)
		case "field":
			b.WriteString(field(it.n))
		case "fieldNF":
			b.WriteString(field(len(fields)))
		case "NF":
			b.WriteString(strconv.Itoa(len(fields)))
		case "NR":
			b.WriteString(strconv.Itoa(nr))
		}
	}
	return b.String()
}

// grep [-qvicFE] PATTERN [FILE]... prints the lines that match PATTERN,
// a regular expression (Go's syntax, close enough to grep's for the
// patterns scripts use) or with -F a fixed string; -v the lines that do
// not, -i ignoring case, -c their count, -q nothing. It exits 0 if a
// line was selected, 1 if none, 2 on an error.
func grep(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	set, rest := flags(args, "qvicFEsw")
	if len(rest) == 0 {
		fmt.Fprintln(p.Stderr, "Usage: grep [-qvicFE] PATTERN [FILE]...")
		return 2, nil
	}
	pattern := rest[0]
	if set['F'] {
		pattern = regexp.QuoteMeta(pattern)
	}
	if set['w'] {
		pattern = `\b(?:` + pattern + `)\b`
	}
	if set['i'] {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		fmt.Fprintf(p.Stderr, "grep: bad regex '%s': %v\n", rest[0], err)
		return 2, nil
	}
	texts, _, code := p.inputOf(ctx, "grep", rest[1:])
	if code != 0 && set['s'] {
		code = 0
	}
	matched := 0
	for _, text := range texts {
		for _, line := range strings.SplitAfter(text, "\n") {
			if line == "" {
				continue
			}
			if re.MatchString(strings.TrimSuffix(line, "\n")) != set['v'] {
				matched++
				if !set['q'] && !set['c'] {
					io.WriteString(out, strings.TrimSuffix(line, "\n")+"\n")
				}
			}
		}
	}
	if set['c'] {
		fmt.Fprintln(out, matched)
	}
	switch {
	case code != 0:
		return 2, nil
	case matched == 0:
		return 1, nil
	}
	return 0, nil
}

// cut -f LIST [-d DELIM] | -c LIST [FILE]... prints the chosen fields
// (tab-separated unless -d says otherwise) or characters of each line;
// LIST is numbers and ranges, "2", "1,3", "2-".
func cut(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	delim, fields, chars := "\t", "", ""
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		take := func(flag string) string {
			if v := strings.TrimPrefix(a, flag); v != "" {
				return v
			}
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case strings.HasPrefix(a, "-d"):
			delim = take("-d")
		case strings.HasPrefix(a, "-f"):
			fields = take("-f")
		case strings.HasPrefix(a, "-c"):
			chars = take("-c")
		default:
			files = append(files, a)
		}
	}
	list := fields
	if list == "" {
		list = chars
	}
	want, ok := parseCutList(list)
	if !ok {
		fmt.Fprintln(p.Stderr, "cut: expected a list of bytes, characters, or fields")
		return 1, nil
	}
	texts, _, code := p.inputOf(ctx, "cut", files)
	for _, text := range texts {
		for _, line := range strings.SplitAfter(text, "\n") {
			if line == "" {
				continue
			}
			line = strings.TrimSuffix(line, "\n")
			var parts []string
			if fields != "" {
				if !strings.Contains(line, delim) {
					fmt.Fprintln(out, line) // a line without the delimiter is printed whole
					continue
				}
				parts = strings.Split(line, delim)
			} else {
				parts, delim = strings.Split(line, ""), ""
			}
			var kept []string
			for i, part := range parts {
				if want(i + 1) {
					kept = append(kept, part)
				}
			}
			fmt.Fprintln(out, strings.Join(kept, delim))
		}
	}
	return code, nil
}

// parseCutList reads cut's LIST into a test of a (1-based) position.
func parseCutList(list string) (func(int) bool, bool) {
	type span struct{ from, to int }
	var spans []span
	for _, item := range strings.Split(list, ",") {
		from, to, isRange := strings.Cut(item, "-")
		var sp span
		var err error
		if sp.from = 1; from != "" {
			if sp.from, err = strconv.Atoi(from); err != nil || sp.from < 1 {
				return nil, false
			}
		}
		switch {
		case !isRange:
			sp.to = sp.from
		case to == "":
			sp.to = int(^uint(0) >> 1)
		default:
			if sp.to, err = strconv.Atoi(to); err != nil {
				return nil, false
			}
		}
		spans = append(spans, sp)
	}
	return func(n int) bool {
		for _, sp := range spans {
			if n >= sp.from && n <= sp.to {
				return true
			}
		}
		return false
	}, list != ""
}
