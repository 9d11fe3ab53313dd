package server

import (
	"bufio"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestReadingCRILogLines(t *testing.T) {
	const file = "2026-12-01T10:00:00.5Z stdout F started\n" +
		"2026-12-01T10:00:01Z stdout P half \n" +
		"2026-12-01T10:00:01Z stdout F a line\n" +
		"2026-12-01T10:00:02Z stderr F \n" +
		"2026-12-01T10:00:03Z stdout F not yet ended"
	tests := []struct {
		name       string
		timestamps bool
		want       []string
	}{
		{"the text of each full line, P parts joined to the line they begin, an unended last line held back", false,
			[]string{"started\n", "half a line\n", "\n"}},
		{"with timestamps, each line after the time the runtime wrote it", true,
			[]string{"2026-12-01T10:00:00.5Z started\n", "2026-12-01T10:00:01Z half a line\n", "2026-12-01T10:00:02Z \n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd := &logReader{r: bufio.NewReader(strings.NewReader(file)), timestamps: tt.timestamps}
			got, err := rd.readAvailable()
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("readAvailable = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestLogsSinceAndLimitBytes(t *testing.T) {
	const file = "2026-12-01T10:00:00Z stdout F old\n" +
		"2026-12-01T10:00:05Z stdout F new\n" +
		"2026-12-01T10:00:06Z stdout P par\n" +
		"2026-12-01T10:00:06Z stdout F tial\n"
	since, _ := time.Parse(time.RFC3339, "2026-12-01T10:00:03Z")
	rd := &logReader{r: bufio.NewReader(strings.NewReader(file)), since: since}
	got, err := rd.readAvailable()
	if want := []string{"new\n", "partial\n"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("since 10:00:03: %q, %v; want %q", got, err, want)
	}
	var b strings.Builder
	w := &limitedWriter{w: &b, n: 5}
	if _, err := io.WriteString(w, "new\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, "partial\n"); err != errLogLimit || b.String() != "new\np" {
		t.Errorf("limitBytes 5: wrote %q (%v), want %q and the limit", b.String(), err, "new\np")
	}
}

func TestAnUnendedLastLineOfAnExitedContainerIsShown(t *testing.T) {
	rd := &logReader{r: bufio.NewReader(strings.NewReader("2026-12-01T10:00:00Z stdout F first\n2026-12-01T10:00:01Z stdout P DONE\n"))}
	got, _ := rd.readAvailable()
	got = append(got, rd.rest()...)
	if want := []string{"first\n", "DONE"}; !reflect.DeepEqual(got, want) {
		t.Errorf("lines %q, want %q: the P part as printed, without a newline", got, want)
	}
}
