package kubelet

import (
	"bufio"
	"reflect"
	"strings"
	"testing"
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
