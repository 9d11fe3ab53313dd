package shell

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestCommandSubstitution(t *testing.T) {
	tests := []struct {
		name, script   string
		stdout, stderr string
		code           int
	}{
		{"the docs' greeting puts the hostname inside double quotes", `echo "Hello from $(hostname)"`,
			"Hello from web-1\n", "", 0},
		{"the output's trailing newlines are removed, inner ones kept", `x="$(printf 'a\n\nb\n\n\n')"; echo "[$x]"`,
			"[a\n\nb]\n", "", 0},
		{"an unquoted substitution is split into words at blanks", `for w in $(echo "a  b"; echo c); do echo "<$w>"; done`,
			"<a>\n<b>\n<c>\n", "", 0},
		{"a quoted one is one word", `for w in "$(echo "a  b"; echo c)"; do echo "<$w>"; done`,
			"<a  b\nc>\n", "", 0},
		{"text around an unquoted substitution joins its first and last words", `echo x$(echo " a b ")y`,
			"x a b y\n", "", 0},
		{"an empty unquoted substitution is no word, a quoted one an empty word", `set=$(true); for w in $(true) "$(true)"; do echo "<$w>"; done`,
			"<>\n", "", 0},
		{"an assignment's value is not split", `x=$(printf 'a  b'); echo "$x"`, "a  b\n", "", 0},
		{"a bare assignment's status is its substitution's", `x=$(false); echo $?; y=$(exit 3); echo $?`, "1\n3\n", "", 0},
		{"a bare assignment without one is 0", `false; x=1; echo $?`, "0\n", "", 0},
		{"a command's status is the command's, not its substitution's", `echo $(false); echo $?`, "\n0\n", "", 0},
		{"a substitution that is the whole command leaves its status", `$(false); echo $?`, "1\n", "", 0},
		{"$? inside sees the status before it", `false; echo $(echo $?)`, "1\n", "", 0},
		{"substitutions nest", `echo "$(echo "outer $(echo inner)")"`, "outer inner\n", "", 0},
		{"quotes inside $(...) are its own, even inside double quotes", `echo "a $(echo "b  c") d"`, "a b  c d\n", "", 0},
		{"a ) inside quotes does not close it", `echo $(echo ')' ")")`, ") )\n", "", 0},
		{"variables set inside stay inside", `x=1; y=$(x=2; echo $x); echo $x $y`, "1 2\n", "", 0},
		{"exit inside ends only the substitution", `x=$(echo before; exit 4; echo after); echo "$x $?"`, "before 4\n", "", 0},
		{"its stderr is the shell's", `x=$(cat /nope); echo "[$x]"`, "[]\n", "cat: can't open '/nope': No such file or directory\n", 0},
		{"date's line goes into a file, as the docs' while loop writes", `echo $(date) >> /tmp/index.html; sleep 1; echo $(date) >> /tmp/index.html; cat /tmp/index.html`,
			"Tue Dec 1 09:53:43 UTC 2026\nTue Dec 1 09:53:44 UTC 2026\n", "", 0},
		{"a redirection's file name may be substituted", `echo hi > /tmp/$(hostname).txt; cat /tmp/web-1.txt`, "hi\n", "", 0},
		{"a command's name may be too", `$(echo echo) called`, "called\n", "", 0},
		{"backquotes are the older form", "echo \"up on `hostname`\" `echo a   b`", "up on web-1 a b\n", "", 0},
		{"escaped backquotes nest inside backquotes", "echo `echo \\`echo deep\\``", "deep\n", "", 0},
		{"a backslash keeps $ from expanding, quoted or not", `X=v; echo \$X "\$X" "\\$X"`, "$X $X \\v\n", "", 0},
		{"a substitution in a for loop's list", `for f in $(ls /etc/config); do echo "file $f"; done`, "file special.how\n", "", 0},
		{"a comment inside runs to the end of its line", "echo $(echo a # not ) this\n)", "a\n", "", 0},
		{"an unclosed $( is a syntax error", `echo $(echo`, "", "sh: syntax error: unexpected end of file (expecting \")\")\n", 2},
		{"an unclosed backquote is one", "echo `echo", "", "sh: syntax error: unexpected end of file (expecting \"`\")\n", 2},
		{"a syntax error inside is the script's", `echo $(if true; then echo)`, "", "sh: syntax error: unexpected end of file (expecting \"fi\")\n", 2},
		{"an unquoted parenthesis outside one is a subshell, which is not simulated", `echo a)`, "",
			"sh: syntax error near unexpected token `)' (subshells are not simulated)\n", 2},
		{"arithmetic expansion is not simulated, and says so", `echo $((1+2))`, "", "sh: syntax error: arithmetic expansion $((...)) is not simulated\n", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code, _ := run(t, tc.script)
			if out != tc.stdout || errOut != tc.stderr || code != tc.code {
				t.Fatalf("got stdout %q stderr %q exit %d\nwant stdout %q stderr %q exit %d", out, errOut, code, tc.stdout, tc.stderr, tc.code)
			}
		})
	}
}

// A process killed while a substitution runs ends there: the kill is
// not the substitution's status.
func TestAKillInsideASubstitutionEndsTheProcess(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	out := &syncBuilder{}
	p := New(Options{Clock: clk, Stdout: out})
	ctx, kill := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := p.Script(ctx, `echo start; x=$(sleep 600; echo late); echo "never $x"`); done <- err }()
	waitUntil(t, clk.HasWaiters)
	kill()
	if err := <-done; err != ErrKilled {
		t.Fatalf("got %v, want ErrKilled", err)
	}
	if out.String() != "start\n" {
		t.Fatalf("printed %q", out.String())
	}
}

// The parser takes any script with substitutions in it without a panic;
// a script it takes, printed back from what it read (printScript), reads
// the same again; and running it ends (or is killed).
func FuzzParseSubstitutions(f *testing.F) {
	for _, s := range []string{`echo "Hello from $(hostname)"`, "while true; do echo $(date) >> /html/index.html; sleep 1; done",
		`x=$(false); echo $?`, "echo `echo \\`date\\``", `echo "$(echo "a $(echo ')')")"`, `$(`, "`", `"$(`, `echo $((1))`,
		`echo \$X "\$X" '$(x)' \`, "$(# )\n)", `for i in $(ls) "$(cat /x)"; do [ -f $i ] && echo \'$i || rm $i 2>&1; done`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		l, err := parse(script)
		if err != nil {
			return
		}
		printed := printScript(l)
		again, err := parse(printed)
		if err != nil {
			t.Fatalf("%q parsed, but printed back as %q it does not: %v", script, printed, err)
		}
		if reprinted := printScript(again); reprinted != printed {
			t.Fatalf("%q printed as %q, which reads as %q", script, printed, reprinted)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		New(Options{Clock: &instantClock{FakeClock: clocktesting.NewFakeClock(epoch)}}).Script(ctx, script)
	})
}

// printScript writes a parsed script back as sh reads it, each part of
// each word quoted as it was read and each command on a line of its
// own, so that parsing it again gives the same tree.
func printScript(l *list) string {
	var b strings.Builder
	printer{&b}.list(l)
	return b.String()
}

type printer struct{ b *strings.Builder }

func (pr printer) list(l *list) {
	for _, item := range l.items {
		pr.node(item)
		pr.b.WriteString("\n")
	}
}

func (pr printer) node(n node) {
	b := pr.b
	switch n := n.(type) {
	case *andOr:
		pr.node(n.first)
		for _, r := range n.rest {
			b.WriteString(r.op + " ")
			pr.node(r.node)
		}
	case *whileLoop:
		b.WriteString("while ")
		pr.list(n.cond)
		b.WriteString("do ")
		pr.list(n.body)
		b.WriteString("done ")
	case *forLoop:
		b.WriteString("for " + n.name + " in ")
		for _, w := range n.words {
			pr.word(w)
		}
		b.WriteString("\ndo ")
		pr.list(n.body)
		b.WriteString("done ")
	case *ifClause:
		for i, cond := range n.conds {
			if i == 0 {
				b.WriteString("if ")
			} else {
				b.WriteString("elif ")
			}
			pr.list(cond)
			b.WriteString("then ")
			pr.list(n.thens[i])
		}
		if n.els != nil {
			b.WriteString("else ")
			pr.list(n.els)
		}
		b.WriteString("fi ")
	case *simple:
		for _, a := range n.assigns {
			b.WriteString(a.name + "=")
			pr.word(a.value)
		}
		for _, w := range n.words {
			pr.word(w)
		}
		for _, r := range n.redirects {
			switch {
			case r.dup != 0:
				fmt.Fprintf(b, "%d>&%d ", r.fd, r.dup)
			case r.append:
				fmt.Fprintf(b, "%d>> ", r.fd)
				pr.word(r.target)
			default:
				fmt.Fprintf(b, "%d> ", r.fd)
				pr.word(r.target)
			}
		}
	}
}

var inDoubleQuotes = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "`", "\\`")

func (pr printer) word(w word) {
	b := pr.b
	for _, p := range w {
		switch {
		case p.sub != nil && p.quoted == '"':
			b.WriteString("\"$(\n" + printScript(p.sub) + ")\"")
		case p.sub != nil:
			b.WriteString("$(\n" + printScript(p.sub) + ")")
		case p.quoted == '\'' && p.text == "'":
			b.WriteString(`\'`)
		case p.quoted == '\'':
			b.WriteString("'" + p.text + "'")
		case p.quoted == '"':
			b.WriteString(`"` + inDoubleQuotes.Replace(p.text) + `"`)
		default:
			b.WriteString(p.text)
		}
	}
	b.WriteString(" ")
}
