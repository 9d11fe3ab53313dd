package shell

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"unicode/utf8"
)

// Terminal is a container's tty (`kubectl exec -it`, a Pod with tty:
// true): what the kernel's pty line discipline does between the client's
// keyboard and screen and the process, in canonical mode with the flags
// a container's tty starts with (stty sane: ICANON ECHO ECHOE ECHOCTL
// ICRNL ONLCR ISIG).
//
//   - kubectl puts the user's own terminal in raw mode, so every key
//     arrives here as it is typed: the line discipline echoes it back
//     (ECHO), turns Enter's \r into \n (ICRNL), erases on Backspace
//     (ECHOE), and hands the process a whole line at a time (ICANON).
//   - Ctrl-C is SIGINT (ISIG): the command in the foreground is
//     interrupted, or, at the prompt, the line typed so far is dropped.
//     Ctrl-D on an empty line is end-of-file for one read; Ctrl-U erases
//     the line.
//   - What the process writes goes to the screen with each \n as \r\n
//     (ONLCR), since a raw terminal would only move down a line.
//
// Its Read is the process's stdin, Output its stdout and stderr (a tty
// has one output stream).
type Terminal struct {
	screen io.Writer // the client's: echo and output, under mu

	mu          sync.Mutex
	wake        *sync.Cond // Broadcast when ready, eof, interrupted or closed change
	line        []byte     // the line being typed, not yet readable
	ready       []byte     // whole lines typed, for Read
	eof         bool       // Ctrl-D on an empty line: the next Read reads end-of-file
	interrupted bool       // Ctrl-C at the prompt: the next Read says so
	closed      bool       // the client's input ended
	onInterrupt func()     // SIGINT to the foreground command; nil at the prompt
	cols, rows  uint16     // the window size the client last reported
}

// ErrInterrupt is what a read of a Terminal returns when Ctrl-C drops the
// line being typed: an interactive shell prints a new prompt.
var ErrInterrupt = errors.New("interrupt")

// NewTerminal starts the line discipline between keys, what the client
// types, and screen, where the client shows the tty's output. It reads
// keys until they end (the client went away); then Read reads
// end-of-file.
func NewTerminal(keys io.Reader, screen io.Writer) *Terminal {
	t := &Terminal{screen: screen}
	t.wake = sync.NewCond(&t.mu)
	go t.discipline(keys) // owner: the terminal; ends when keys does
	return t
}

// Control characters, as stty names them.
const (
	keyIntr  = 0x03 // ^C: SIGINT
	keyEOF   = 0x04 // ^D
	keyErase = 0x7f // Backspace (DEL); ^H (0x08) erases too
	keyKill  = 0x15 // ^U: erase the line
	keyQuit  = 0x1c // ^\: SIGQUIT, which interrupts as SIGINT does here
)

// discipline reads keys until they end, and then closes the terminal.
func (t *Terminal) discipline(keys io.Reader) {
	buf := make([]byte, 1024)
	for {
		n, err := keys.Read(buf)
		t.mu.Lock()
		for _, c := range buf[:n] {
			t.key(c)
		}
		if err != nil {
			t.closed = true
			t.wake.Broadcast()
		}
		t.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// key handles one typed byte. Callers hold t.mu.
func (t *Terminal) key(c byte) {
	switch {
	case c == '\r' || c == '\n': // ICRNL: Enter sends \r
		t.echo("\r\n")
		t.ready = append(append(t.ready, t.line...), '\n')
		t.line = nil
		t.wake.Broadcast()
	case c == keyErase || c == '\b':
		if len(t.line) > 0 {
			_, size := utf8.DecodeLastRune(t.line)
			t.line = t.line[:len(t.line)-size]
			t.echo("\b \b")
		}
	case c == keyKill:
		t.echo(string(bytes.Repeat([]byte("\b \b"), utf8.RuneCount(t.line))))
		t.line = nil
	case c == keyIntr || c == keyQuit:
		t.echo(caret(c))
		t.line, t.ready = nil, nil // without NOFLSH, a signal flushes what was typed
		if t.onInterrupt != nil {
			t.onInterrupt()
		} else {
			t.interrupted = true
			t.wake.Broadcast()
		}
	case c == keyEOF:
		if len(t.line) == 0 {
			t.eof = true
		} else { // ^D in a line ends it without a newline
			t.ready = append(t.ready, t.line...)
			t.line = nil
		}
		t.wake.Broadcast()
	case c < 0x20 && c != '\t': // ^Z too: there is no job control
		t.echo(caret(c)) // ECHOCTL: ^[ for Escape, so arrow keys show as ^[[A
		t.line = append(t.line, c)
	default:
		t.echo(string(c))
		t.line = append(t.line, c)
	}
}

// caret is how ECHOCTL shows a control character: ^C for 0x03.
func caret(c byte) string { return "^" + string(rune(c+'@')) }

// echo writes to the screen as typed. Callers hold t.mu.
func (t *Terminal) echo(s string) { t.screen.Write([]byte(s)) }

// Read reads what has been typed, at most one line at a time, as a
// process reading a tty in canonical mode does.
func (t *Terminal) Read(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.ready) == 0 && !t.eof && !t.interrupted && !t.closed {
		t.wake.Wait()
	}
	switch {
	case len(t.ready) > 0:
		end := bytes.IndexByte(t.ready, '\n') + 1
		if end == 0 || end > len(b) {
			end = min(len(t.ready), len(b))
		}
		n := copy(b, t.ready[:end])
		t.ready = t.ready[n:]
		return n, nil
	case t.interrupted:
		t.interrupted = false
		return 0, ErrInterrupt
	case t.eof:
		t.eof = false
		return 0, io.EOF
	}
	return 0, io.EOF // closed
}

// Output is where the process writes: to the screen, \n as \r\n.
func (t *Terminal) Output() io.Writer {
	return writerFunc(func(b []byte) (int, error) {
		t.mu.Lock()
		defer t.mu.Unlock()
		if _, err := t.screen.Write(bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))); err != nil {
			return 0, err
		}
		return len(b), nil
	})
}

// Resize records the client's window size (kubectl sends it at start and
// on every SIGWINCH); Size reports it.
func (t *Terminal) Resize(cols, rows uint16) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cols, t.rows = cols, rows
}

// Size is the window size last reported: columns and rows, 0 if none.
func (t *Terminal) Size() (cols, rows uint16) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cols, t.rows
}

// foreground makes Ctrl-C call interrupt (nil: at the prompt, where it
// drops the line and Read says ErrInterrupt). A Ctrl-C that came while
// the shell was between the two, its line read but the command not yet
// started, interrupts the command at once.
func (t *Terminal) foreground(interrupt func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.onInterrupt = interrupt
	if interrupt != nil && t.interrupted {
		t.interrupted = false
		interrupt()
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
