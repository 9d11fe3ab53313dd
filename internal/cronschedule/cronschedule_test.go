package cronschedule

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"
)

func TestParse(t *testing.T) {
	after := time.Date(2024, 5, 1, 10, 7, 0, 0, time.UTC)
	tests := []struct {
		name, schedule string
		wantErr        string
		wantNext       time.Time
	}{
		{name: "every five minutes is the next multiple of five", schedule: "*/5 * * * *",
			wantNext: time.Date(2024, 5, 1, 10, 10, 0, 0, time.UTC)},
		{name: "a question mark stands for any day of the week", schedule: "*/1 * * * ?",
			wantNext: time.Date(2024, 5, 1, 10, 8, 0, 0, time.UTC)},
		{name: "descriptors are accepted", schedule: "@hourly",
			wantNext: time.Date(2024, 5, 1, 11, 0, 0, 0, time.UTC)},
		{name: "a library time zone prefix moves the schedule", schedule: "TZ=Asia/Tokyo 0 20 * * *",
			wantNext: time.Date(2024, 5, 1, 11, 0, 0, 0, time.UTC)}, // 20:00 in Tokyo is 11:00 UTC
		{name: "a seconds field is one field too many", schedule: "0 */5 * * * *", wantErr: "expected exactly 5 fields, found 6: [0 */5 * * * *]"},
		{name: "a word is not a schedule", schedule: "hourly", wantErr: "expected exactly 5 fields, found 1: [hourly]"},
		{name: "minutes stop at 59", schedule: "60 * * * *", wantErr: "end of range (60) above maximum (59): 60"},
		{name: "the library's panic on a bare time zone is an error", schedule: "TZ=0", wantErr: "invalid schedule format: runtime error: slice bounds out of range [:-1]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sched, err := Parse(tt.schedule)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Parse(%q) error = %v, want %q", tt.schedule, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.schedule, err)
			}
			if got := sched.Next(after); !got.Equal(tt.wantNext) {
				t.Errorf("Next(%v) = %v, want %v", after, got, tt.wantNext)
			}
		})
	}
}

func TestInTimeZone(t *testing.T) {
	tests := []struct {
		name, schedule string
		timeZone       *string
		want           string
	}{
		{"no time zone leaves the schedule local", "0 9 * * *", nil, "0 9 * * *"},
		{"spec.timeZone becomes the library's prefix", "0 9 * * *", ptr.To("Europe/Paris"), "TZ=Europe/Paris 0 9 * * *"},
		{"a schedule that names its own zone keeps it", "CRON_TZ=UTC 0 9 * * *", ptr.To("Europe/Paris"), "CRON_TZ=UTC 0 9 * * *"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := InTimeZone(tt.schedule, tt.timeZone); got != tt.want {
				t.Errorf("InTimeZone(%q, %v) = %q, want %q", tt.schedule, tt.timeZone, got, tt.want)
			}
		})
	}
}
