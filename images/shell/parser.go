package shell

import "fmt"

// The grammar, a small part of POSIX sh's:
//
//	list    = andOr { (";" | newline) andOr }
//	andOr   = pipeline { ("&&" | "||") pipeline }
//	pipeline = command { "|" command }
//	command = "while" list "do" list "done"
//	        | "for" NAME [ "in" word... ] (";" | newline) "do" list "done"
//	        | "if" list "then" list { "elif" list "then" list } [ "else" list ] "fi"
//	        | { NAME=word } { word } [ (">" | ">>") word ]
//
// A word's $(list) and `list`, command substitutions, are parsed as
// the lexer reads them (lexer.go).

// node is one parsed piece of a script.
type node interface{ isNode() }

type (
	list  struct{ items []node } // run one after another
	andOr struct {
		first node
		rest  []andOrPart
	}
	andOrPart struct {
		op   string // "&&" or "||"
		node node
	}
	pipeline  struct{ commands []node } // each one's output is the next one's input
	whileLoop struct{ cond, body *list }
	forLoop   struct {
		name  string
		words []word
		body  *list
	}
	ifClause struct {
		conds, thens []*list // if/elif conditions and their branches
		els          *list   // nil if there is no else
	}
	simple struct {
		assigns   []assignment
		words     []word
		redirects []redirect // in order: "> /dev/null 2>&1" differs from "2>&1 > /dev/null"
	}
	assignment struct {
		name  string
		value word
	}
	redirect struct {
		fd     int  // 1 (stdout) or 2 (stderr)
		dup    int  // ">&N": the stream fd now goes where N goes; 0 for a file
		append bool // ">>"
		target word
	}
)

func (*list) isNode()      {}
func (*andOr) isNode()     {}
func (*pipeline) isNode()  {}
func (*whileLoop) isNode() {}
func (*forLoop) isNode()   {}
func (*ifClause) isNode()  {}
func (*simple) isNode()    {}

// parser walks the tokens of one script.
type parser struct {
	toks []token
	pos  int
}

// parse reads a whole script.
func parse(script string) (*list, error) {
	toks, err := lex(script)
	if err != nil {
		return nil, err
	}
	return parseTokens(toks)
}

// parseTokens reads the tokens of a whole script, or of the commands of
// a $(...) (the lexer parses those where it finds them).
func parseTokens(toks []token) (*list, error) {
	p := &parser{toks: toks}
	l, err := p.list()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, p.unexpected()
	}
	return l, nil
}

// keywords end a list: they belong to the compound command around it.
var keywords = map[string]bool{"do": true, "done": true, "then": true, "elif": true, "else": true, "fi": true}

func (p *parser) peekKeyword() string {
	if p.pos < len(p.toks) && p.toks[p.pos].op == "" {
		if s, ok := p.toks[p.pos].word.literal(); ok && keywords[s] {
			return s
		}
	}
	return ""
}

func (p *parser) skipSeparators() {
	for p.pos < len(p.toks) && (p.toks[p.pos].op == ";" || p.toks[p.pos].op == "\n") {
		p.pos++
	}
}

func (p *parser) list() (*list, error) {
	l := &list{}
	for {
		p.skipSeparators()
		if p.pos >= len(p.toks) || p.peekKeyword() != "" {
			return l, nil
		}
		n, err := p.andOr()
		if err != nil {
			return nil, err
		}
		l.items = append(l.items, n)
	}
}

func (p *parser) andOr() (node, error) {
	first, err := p.pipeline()
	if err != nil {
		return nil, err
	}
	ao := &andOr{first: first}
	for p.pos < len(p.toks) && (p.toks[p.pos].op == "&&" || p.toks[p.pos].op == "||") {
		op := p.toks[p.pos].op
		p.pos++
		for p.pos < len(p.toks) && p.toks[p.pos].op == "\n" {
			p.pos++ // a newline may follow && or ||
		}
		n, err := p.pipeline()
		if err != nil {
			return nil, err
		}
		ao.rest = append(ao.rest, andOrPart{op: op, node: n})
	}
	if len(ao.rest) == 0 {
		return first, nil
	}
	return ao, nil
}

func (p *parser) pipeline() (node, error) {
	first, err := p.command()
	if err != nil {
		return nil, err
	}
	pl := &pipeline{commands: []node{first}}
	for p.pos < len(p.toks) && p.toks[p.pos].op == "|" {
		p.pos++
		for p.pos < len(p.toks) && p.toks[p.pos].op == "\n" {
			p.pos++ // a newline may follow |
		}
		n, err := p.command()
		if err != nil {
			return nil, err
		}
		pl.commands = append(pl.commands, n)
	}
	if len(pl.commands) == 1 {
		return first, nil
	}
	return pl, nil
}

func (p *parser) command() (node, error) {
	if p.pos >= len(p.toks) {
		return nil, fmt.Errorf("syntax error: unexpected end of file")
	}
	if name, ok := p.toks[p.pos].word.literal(); ok && p.toks[p.pos].op == "" {
		switch name {
		case "while":
			p.pos++
			return p.whileLoop()
		case "for":
			p.pos++
			return p.forLoop()
		case "if":
			p.pos++
			return p.ifClause()
		}
	}
	return p.simple()
}

// expect consumes keyword kw.
func (p *parser) expect(kw string) error {
	p.skipSeparators()
	if p.peekKeyword() != kw {
		if p.pos >= len(p.toks) {
			return fmt.Errorf("syntax error: unexpected end of file (expecting %q)", kw)
		}
		return p.unexpected()
	}
	p.pos++
	return nil
}

func (p *parser) unexpected() error {
	t := p.toks[p.pos]
	s := t.op
	if s == "" {
		s, _ = t.word.literal()
	}
	if s == "\n" {
		s = "newline"
	}
	return fmt.Errorf("syntax error near unexpected token `%s'", s)
}

func (p *parser) whileLoop() (node, error) {
	cond, err := p.list()
	if err != nil {
		return nil, err
	}
	body, err := p.doBody()
	if err != nil {
		return nil, err
	}
	return &whileLoop{cond: cond, body: body}, nil
}

// doBody is "do list done".
func (p *parser) doBody() (*list, error) {
	if err := p.expect("do"); err != nil {
		return nil, err
	}
	body, err := p.list()
	if err != nil {
		return nil, err
	}
	return body, p.expect("done")
}

func (p *parser) forLoop() (node, error) {
	if p.pos >= len(p.toks) || p.toks[p.pos].op != "" {
		return nil, fmt.Errorf("syntax error: bad for loop variable")
	}
	name, ok := p.toks[p.pos].word.literal()
	if !ok || !isName(name) {
		return nil, fmt.Errorf("syntax error: bad for loop variable")
	}
	p.pos++
	f := &forLoop{name: name}
	if p.pos < len(p.toks) && p.toks[p.pos].op == "" {
		if in, ok := p.toks[p.pos].word.literal(); ok && in == "in" {
			p.pos++
			for p.pos < len(p.toks) && p.toks[p.pos].op == "" {
				f.words = append(f.words, p.toks[p.pos].word)
				p.pos++
			}
		}
	}
	body, err := p.doBody()
	if err != nil {
		return nil, err
	}
	f.body = body
	return f, nil
}

func (p *parser) ifClause() (node, error) {
	c := &ifClause{}
	for {
		cond, err := p.list()
		if err != nil {
			return nil, err
		}
		if err := p.expect("then"); err != nil {
			return nil, err
		}
		then, err := p.list()
		if err != nil {
			return nil, err
		}
		c.conds, c.thens = append(c.conds, cond), append(c.thens, then)
		switch p.peekKeyword() {
		case "elif":
			p.pos++
			continue
		case "else":
			p.pos++
			if c.els, err = p.list(); err != nil {
				return nil, err
			}
		}
		return c, p.expect("fi")
	}
}

func (p *parser) simple() (node, error) {
	s := &simple{}
	for p.pos < len(p.toks) {
		t := p.toks[p.pos]
		switch {
		case t.op == ">&":
			s.redirects = append(s.redirects, redirect{fd: t.fd, dup: t.dup})
			p.pos++
		case t.op == ">" || t.op == ">>":
			p.pos++
			if p.pos >= len(p.toks) || p.toks[p.pos].op != "" {
				return nil, fmt.Errorf("syntax error: a redirection needs a file name")
			}
			s.redirects = append(s.redirects, redirect{fd: t.fd, append: t.op == ">>", target: p.toks[p.pos].word})
			p.pos++
		case t.op != "":
			if len(s.words) == 0 && len(s.assigns) == 0 && len(s.redirects) == 0 {
				return nil, p.unexpected()
			}
			return s, nil
		default:
			if name, value, ok := splitAssignment(t.word); ok && len(s.words) == 0 {
				s.assigns = append(s.assigns, assignment{name: name, value: value})
			} else {
				s.words = append(s.words, t.word)
			}
			p.pos++
		}
	}
	return s, nil
}

// splitAssignment recognises NAME=value, where NAME is unquoted.
func splitAssignment(w word) (string, word, bool) {
	if len(w) == 0 || w[0].quoted != 0 {
		return "", nil, false
	}
	for i := 0; i < len(w[0].text); i++ {
		if w[0].text[i] == '=' {
			name := w[0].text[:i]
			if !isName(name) {
				return "", nil, false
			}
			value := append(word{{text: w[0].text[i+1:]}}, w[1:]...)
			return name, value, true
		}
	}
	return "", nil, false
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
