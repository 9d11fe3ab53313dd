// Package logging gives every mkube binary the same readable text logs:
// one line per event, stable keys, the component's name on each line, so
// that the logs of all four programs can be read side by side.
package logging

import (
	"log/slog"
	"os"
	"strings"
)

// New returns a text logger for component at level ("debug", "info",
// "warn" or "error"; anything else means info).
func New(component, level string) *slog.Logger {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	}
	h := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})
	return slog.New(h).With("component", component)
}
