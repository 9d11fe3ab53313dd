package shell

import "testing"

// The scripts of Kubernetes' Job tests (test/e2e/framework/job), which
// read a marker file with [[ -r ]] and compute with expr.
func TestJobTestScripts(t *testing.T) {
	failOddSucceedEven := `
			if [ $(expr ${JOB_COMPLETION_INDEX} % 2) -ne 0 ]; then
				exit 1
			else
				exit 0
			fi
			`
	failOnce := `
			if [[ -r /data/foo ]]
			then
				exit 0
			else
				touch /data/foo
				exit 1
			fi
		`
	tests := []struct {
		name, script string
		env          []string
		stdout       string
		code         int
	}{
		{"an odd index fails", failOddSucceedEven, []string{"JOB_COMPLETION_INDEX=3"}, "", 1},
		{"an even index succeeds", failOddSucceedEven, []string{"JOB_COMPLETION_INDEX=2"}, "", 0},
		{"the first run fails, leaving its marker", failOnce, nil, "", 1},
		{"the second run finds the marker and succeeds", "touch /data/foo; " + failOnce, nil, "", 0},
		{"expr prints and exits 1 for a zero result", `expr 4 % 2; echo $?; expr 2 + 3; echo $?`, nil, "0\n1\n5\n0\n", 0},
		{"[[ needs its ]]", `[[ -r /x`, nil, "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code, _ := run(t, tt.script, tt.env...)
			if stdout != tt.stdout || code != tt.code {
				t.Errorf("stdout %q, code %d (stderr %q); want %q, %d", stdout, code, stderr, tt.stdout, tt.code)
			}
		})
	}
}
