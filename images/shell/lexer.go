package shell

import (
	"errors"
	"fmt"
	"strings"
)

// A word is what the shell reads between blanks, kept in parts so that
// expansion (expand.go) knows what was quoted: nothing expands inside
// single quotes or after a backslash, what double quotes hold is not
// split into several words, and a command substitution's part stands
// for the output of its commands.
type word []part

type part struct {
	text string
	// quoted is 0, '"', or '\'' for single quotes and for a character a
	// backslash escapes: such text is taken as it is.
	quoted byte
	sub    *list // $(...) or `...`: the commands whose output the part is
}

// literal is the word's text if no part of it can expand, for keywords and
// names.
func (w word) literal() (string, bool) {
	var b strings.Builder
	for _, p := range w {
		if p.quoted != 0 || p.sub != nil {
			return "", false
		}
		b.WriteString(p.text)
	}
	return b.String(), true
}

// token is a word or an operator: ";", "\n", "&&", "||", "|", ">", ">>"
// or ">&". A redirection's fd is the stream it redirects (1, or 2 for
// "2>"), and ">&N"'s dup is N.
type token struct {
	word    word
	op      string
	fd, dup int
}

// errUnterminatedQuote is an open quote at the end of the script; an
// interactive shell reads on (interactive.go's unfinished).
var errUnterminatedQuote = errors.New("unterminated quoted string")

// lex splits a script into tokens.
func lex(script string) ([]token, error) {
	l := &lexer{src: script}
	return l.tokens(false)
}

// lexer reads a script a byte at a time. Each of its readers starts at
// l.pos and leaves it on the last byte it took.
type lexer struct {
	src string
	pos int
}

// peek is the byte n after l.pos, or 0 past the end.
func (l *lexer) peek(n int) byte {
	if l.pos+n < len(l.src) {
		return l.src[l.pos+n]
	}
	return 0
}

// tokens reads tokens to the end of the script or, nested inside $(...),
// to the ")" that closes it, where it stops. Other parentheses are
// subshells in sh, which are not simulated. A '#' at the start of a
// word begins a comment to the end of the line, so that a ")" in it
// closes nothing, as in sh.
func (l *lexer) tokens(nested bool) ([]token, error) {
	var toks []token
	var w wordBuilder
	endWord := func() {
		if cur, ok := w.end(); ok {
			toks = append(toks, token{word: cur})
		}
	}
	for ; l.pos < len(l.src); l.pos++ {
		c := l.src[l.pos]
		switch {
		case c == ' ' || c == '\t':
			endWord()
		case c == ')' && nested:
			endWord()
			return toks, nil
		case c == '(' || c == ')':
			return nil, fmt.Errorf("syntax error near unexpected token `%c' (subshells are not simulated)", c)
		case c == '\\':
			if l.pos+1 < len(l.src) {
				l.pos++
			} // else a backslash that ends the script is itself
			if l.src[l.pos] != '\n' { // a backslash-newline joins lines
				w.add(part{text: l.src[l.pos : l.pos+1], quoted: '\''})
			}
		case c == '\'':
			end := strings.IndexByte(l.src[l.pos+1:], '\'')
			if end < 0 {
				return nil, errUnterminatedQuote
			}
			w.add(part{text: l.src[l.pos+1 : l.pos+1+end], quoted: '\''})
			l.pos += end + 1
		case c == '"':
			parts, err := l.doubleQuoted()
			if err != nil {
				return nil, err
			}
			w.add(parts...)
		case c == '$' && l.peek(1) == '(':
			sub, err := l.substitution()
			if err != nil {
				return nil, err
			}
			w.add(part{sub: sub})
		case c == '`':
			sub, err := l.backquoted(false)
			if err != nil {
				return nil, err
			}
			w.add(part{sub: sub})
		case c == '#' && !w.started:
			for l.pos+1 < len(l.src) && l.src[l.pos+1] != '\n' {
				l.pos++
			}
		case c == '\n' || c == ';':
			endWord()
			toks = append(toks, token{op: string(c)})
		case c == '|' && l.peek(1) != '|':
			endWord()
			toks = append(toks, token{op: "|"}) // a pipe (pipeline, parser.go)
		case c == '&' || c == '|':
			endWord()
			if l.peek(1) != c {
				return nil, fmt.Errorf("syntax error near unexpected token `%c' (background jobs are not simulated)", c)
			}
			toks = append(toks, token{op: string([]byte{c, c})})
			l.pos++
		case c == '>':
			fd := w.redirectedFD() // "2>" redirects stderr
			endWord()
			switch {
			case l.peek(1) == '>':
				toks = append(toks, token{op: ">>", fd: fd})
				l.pos++
			case l.peek(1) == '&' && (l.peek(2) == '1' || l.peek(2) == '2'):
				toks = append(toks, token{op: ">&", fd: fd, dup: int(l.peek(2) - '0')})
				l.pos += 2
			default:
				toks = append(toks, token{op: ">", fd: fd})
			}
		default:
			w.text.WriteByte(c)
			w.started = true
		}
	}
	if nested {
		return nil, errors.New(`syntax error: unexpected end of file (expecting ")")`)
	}
	endWord()
	return toks, nil
}

// doubleQuoted reads "..." from its opening quote. $VAR and ${VAR} stay
// in the text, to be expanded when the command runs; $(...) and `...`
// are parts of their own. A backslash escapes only $ ` " \ and newline
// (which it removes), as in sh; an escaped $ is a part quoted as if by
// single quotes, so that it does not expand.
func (l *lexer) doubleQuoted() ([]part, error) {
	var parts []part
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			parts = append(parts, part{text: text.String(), quoted: '"'})
			text.Reset()
		}
	}
	for l.pos++; l.pos < len(l.src); l.pos++ {
		switch c := l.src[l.pos]; {
		case c == '"':
			flush()
			if len(parts) == 0 { // "" is a word of its own, empty
				parts = []part{{quoted: '"'}}
			}
			return parts, nil
		case c == '\\' && strings.IndexByte("$`\"\\\n", l.peek(1)) >= 0:
			l.pos++
			switch l.src[l.pos] {
			case '\n':
			case '$':
				flush()
				parts = append(parts, part{text: "$", quoted: '\''})
			default:
				text.WriteByte(l.src[l.pos])
			}
		case c == '$' && l.peek(1) == '(', c == '`':
			flush()
			var sub *list
			var err error
			if c == '$' {
				sub, err = l.substitution()
			} else {
				sub, err = l.backquoted(true)
			}
			if err != nil {
				return nil, err
			}
			parts = append(parts, part{sub: sub, quoted: '"'})
		default:
			text.WriteByte(c)
		}
	}
	return nil, errUnterminatedQuote
}

// substitution reads $(...) from its '$': the commands inside, lexed
// afresh (quotes inside it are its own, even within double quotes) up
// to the ")" that closes them. $((...)), arithmetic expansion, is not
// simulated.
func (l *lexer) substitution() (*list, error) {
	if l.peek(2) == '(' {
		return nil, errors.New("syntax error: arithmetic expansion $((...)) is not simulated")
	}
	l.pos += 2
	toks, err := l.tokens(true)
	if err != nil {
		return nil, err
	}
	return parseTokens(toks)
}

// backquoted reads `...`, the older form of $(...), from its opening
// backquote. Inside, a backslash is kept except before $ ` \ (and "
// within double quotes), which it escapes; what that leaves is a script
// of its own, so that \`...\` nests.
func (l *lexer) backquoted(inDouble bool) (*list, error) {
	var script strings.Builder
	for l.pos++; l.pos < len(l.src); l.pos++ {
		c, next := l.src[l.pos], l.peek(1)
		switch {
		case c == '`':
			return parse(script.String())
		case c == '\\' && (strings.IndexByte("$`\\", next) >= 0 || inDouble && next == '"'):
			l.pos++
			script.WriteByte(next)
		default:
			script.WriteByte(c)
		}
	}
	return nil, errors.New("syntax error: unexpected end of file (expecting \"`\")")
}

// wordBuilder collects the parts of the word being read.
type wordBuilder struct {
	parts   word
	text    strings.Builder // unquoted text not yet a part
	started bool            // a word has begun, even one that is only ""
}

func (b *wordBuilder) flush() {
	if b.text.Len() > 0 {
		b.parts = append(b.parts, part{text: b.text.String()})
		b.text.Reset()
	}
}

func (b *wordBuilder) add(ps ...part) {
	b.flush()
	b.parts = append(b.parts, ps...)
	b.started = true
}

// end returns the word read, if one was, and starts the next.
func (b *wordBuilder) end() (word, bool) {
	b.flush()
	w, ok := b.parts, b.started
	b.parts, b.started = nil, false
	return w, ok
}

// redirectedFD is the stream a ">" right after the word redirects: 2 if
// the word so far is "2" (1 for "1"), which it then is no longer; else 1.
func (b *wordBuilder) redirectedFD() int {
	if s := b.text.String(); b.parts == nil && (s == "1" || s == "2") {
		b.text.Reset()
		b.started = false
		return int(s[0] - '0')
	}
	return 1
}
