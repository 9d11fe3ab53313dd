package lib

import (
	"fmt"

	"github.com/mkube/mkube/images/shell"
)

// KlogLine is a line of klog's text format on stderr: severity, date,
// time with microseconds, the process's PID (1 in a container), the
// source line, and the message.
func KlogLine(p *shell.Process, severity byte, source, msg string) {
	now := p.Clock.Now().UTC()
	fmt.Fprintf(p.Stderr, "%c%s %7d %s] %s\n", severity, now.Format("0102 15:04:05.000000"), 1, source, msg)
}
