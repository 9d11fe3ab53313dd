package shell

import (
	"context"
	"strconv"
	"strings"
)

// Expansion turns a word into what a command gets, as sh does when it
// runs the command (POSIX 2.6): command substitution runs $(...) and
// `...` for their output; parameter expansion puts in $VAR, ${VAR} and
// $?; field splitting cuts what unquoted expansions gave at blanks (the
// default IFS: space, tab, newline); quote removal is the lexer's work
// already. Pathname expansion (globs) is not simulated.

// expandWord expands w into fields, the words of a command line: an
// unquoted expansion may make several, or none; quoted text is never
// split, and "" is a field of its own.
func (p *Process) expandWord(ctx context.Context, w word) ([]string, error) {
	var f fields
	for _, part := range w {
		text, err := p.expandPart(ctx, part)
		if err != nil {
			return nil, err
		}
		if part.quoted != 0 {
			f.addQuoted(text)
		} else {
			f.addSplit(text)
		}
	}
	f.end()
	return f.done, nil
}

// expandString expands w into one string, unsplit, as sh does for an
// assignment's value (x=$(echo "a  b") keeps both blanks) and here for
// a redirection's file.
func (p *Process) expandString(ctx context.Context, w word) (string, error) {
	var b strings.Builder
	for _, part := range w {
		text, err := p.expandPart(ctx, part)
		if err != nil {
			return "", err
		}
		b.WriteString(text)
	}
	return b.String(), nil
}

// expandPart is what one part of a word expands to.
func (p *Process) expandPart(ctx context.Context, part part) (string, error) {
	switch {
	case part.sub != nil:
		return p.substitute(ctx, part.sub)
	case part.quoted == '\'':
		return part.text, nil
	}
	return p.expand(part.text), nil
}

// substitute runs the commands of a command substitution in a subshell
// (their variables and `exit` are their own) and returns their
// standard output without its trailing newlines (POSIX 2.6.3), so that
// "$(hostname)" is the name alone. Their exit status is $? from then
// on: a command without a name keeps it (runSimple). What they write
// on stderr goes where the shell's does. A kill inside ends the whole
// process, as it does everything else.
func (p *Process) substitute(ctx context.Context, l *list) (string, error) {
	var out strings.Builder
	code, err := p.subshell(func() (int, error) {
		err := p.run(ctx, l, &out)
		return p.status, err
	})
	if err != nil {
		return "", err
	}
	p.status = code
	p.subs++
	return strings.TrimRight(out.String(), "\n"), nil
}

// expand substitutes variables in s.
func (p *Process) expand(s string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		rest := s[i+1:]
		switch {
		case rest[0] == '?':
			b.WriteString(strconv.Itoa(p.status))
			i++
		case rest[0] == '{':
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				b.WriteByte('$')
				continue
			}
			b.WriteString(p.Getenv(rest[1:end]))
			i += end + 1
		default:
			n := 0
			for n < len(rest) && isName(rest[:n+1]) {
				n++
			}
			if n == 0 {
				b.WriteByte('$')
				continue
			}
			b.WriteString(p.Getenv(rest[:n]))
			i += n
		}
	}
	return b.String()
}

// fields collects the fields one word expands to.
type fields struct {
	done []string
	cur  strings.Builder
	have bool // cur is a field, even an empty one ("")
}

// end closes the current field, if there is one.
func (f *fields) end() {
	if f.have {
		f.done = append(f.done, f.cur.String())
	}
	f.cur.Reset()
	f.have = false
}

// addQuoted adds quoted text to the current field, as it is.
func (f *fields) addQuoted(text string) {
	f.cur.WriteString(text)
	f.have = true
}

// addSplit adds unquoted text: a blank in it ends a field, and blanks
// at its ends separate it from what is around it, so that with X=" b "
// a${X}c is three fields, "a", "b" and "c".
func (f *fields) addSplit(text string) {
	if text == "" {
		return
	}
	if isBlank(rune(text[0])) {
		f.end()
	}
	for i, piece := range strings.FieldsFunc(text, isBlank) {
		if i > 0 {
			f.end()
		}
		f.cur.WriteString(piece)
		f.have = true
	}
	if isBlank(rune(text[len(text)-1])) {
		f.end()
	}
}

// isBlank is a character of the default IFS.
func isBlank(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }
