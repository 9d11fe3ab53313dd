package shell

import (
	"fmt"
	"strings"
)

// A word is what the shell reads between blanks, kept in parts so that
// expansion knows what was quoted: nothing expands inside single quotes,
// and what double quotes hold is not split into several words.
type word []part

type part struct {
	text   string
	quoted byte // 0, '\'' or '"'
}

// literal is the word's text if no part of it can expand, for keywords and
// names.
func (w word) literal() (string, bool) {
	var b strings.Builder
	for _, p := range w {
		if p.quoted != 0 {
			return "", false
		}
		b.WriteString(p.text)
	}
	return b.String(), true
}

// token is a word or an operator: ";", "\n", "&&", "||", ">", ">>" or
// ">&". A redirection's fd is the stream it redirects (1, or 2 for
// "2>"), and ">&N"'s dup is N.
type token struct {
	word    word
	op      string
	fd, dup int
}

// lex splits a script into tokens. A '#' at the start of a word begins a
// comment to the end of the line.
func lex(script string) ([]token, error) {
	var toks []token
	var cur word
	var text strings.Builder
	inWord := false
	flush := func(quoted byte) {
		if text.Len() > 0 || quoted != 0 {
			cur = append(cur, part{text: text.String(), quoted: quoted})
			text.Reset()
		}
	}
	endWord := func() {
		flush(0)
		if inWord {
			toks = append(toks, token{word: cur})
		}
		cur, inWord = nil, false
	}
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case c == ' ' || c == '\t':
			endWord()
		case c == '\\' && i+1 < len(script):
			i++
			if script[i] != '\n' { // a backslash-newline joins lines
				text.WriteByte(script[i])
				inWord = true
			}
		case c == '\'' || c == '"':
			flush(0)
			end := closingQuote(script[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unterminated quoted string")
			}
			body := script[i+1 : i+1+end]
			if c == '"' {
				body = unescapeDouble(body)
			}
			text.WriteString(body)
			flush(c)
			inWord = true
			i += end + 1
		case c == '#' && !inWord:
			for i < len(script) && script[i] != '\n' {
				i++
			}
			i--
		case c == '\n' || c == ';':
			endWord()
			toks = append(toks, token{op: string(c)})
		case c == '&' || c == '|':
			endWord()
			if i+1 >= len(script) || script[i+1] != c {
				return nil, fmt.Errorf("syntax error near unexpected token `%c' (pipes and background jobs are not simulated)", c)
			}
			toks = append(toks, token{op: string([]byte{c, c})})
			i++
		case c == '>':
			fd := 1
			if s := text.String(); inWord && cur == nil && (s == "1" || s == "2") { // "2>" redirects stderr
				fd = int(s[0] - '0')
				text.Reset()
				inWord = false
			}
			endWord()
			switch {
			case i+1 < len(script) && script[i+1] == '>':
				toks = append(toks, token{op: ">>", fd: fd})
				i++
			case i+2 < len(script) && script[i+1] == '&' && (script[i+2] == '1' || script[i+2] == '2'):
				toks = append(toks, token{op: ">&", fd: fd, dup: int(script[i+2] - '0')})
				i += 2
			default:
				toks = append(toks, token{op: ">", fd: fd})
			}
		default:
			text.WriteByte(c)
			inWord = true
		}
	}
	endWord()
	return toks, nil
}

// unescapeDouble keeps what a backslash escapes inside double quotes.
func unescapeDouble(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// closingQuote finds the quote that ends a quoted string; inside double
// quotes a backslash escapes the next character.
func closingQuote(s string, q byte) int {
	for i := 0; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q:
			return i
		}
	}
	return -1
}
