package shell

import (
	"context"
	"strings"
	"testing"
)

func TestPipelinesWcAndAwk(t *testing.T) {
	tests := []struct{ name, script, want string }{
		{"wc -l of a file is bare", "echo a > /f; echo 'b c' >> /f; wc -l /f", "2 /f\n"},
		{"wc of stdin has no name", "echo 'a b c' | wc -w", "3\n"},
		{"wc without flags counts lines, words and bytes in columns", "echo 'a b' > /f; wc /f", "        1         2         4 /f\n"},
		{"the restart test's count: wc piped through awk", "f=/f; echo hello >> $f; echo hello >> $f; count=$(echo 'hello' >> $f ; wc -l $f | awk {'print $1'}); echo $count",
			"3\n"},
		{"awk fields, NF, NR and strings", "printf 'a b c\\nd e\\n' | awk '{print NR \": \" $NF, NF}'", "1: c 3\n2: e 2\n"},
		{"awk -F", "echo 'root:x:0' | awk -F: '{print $3}'", "0\n"},
		{"a pipeline's status is its last command's", "false | true; echo $?; true | false; echo $?", "0\n1\n"},
		{"three stages", "printf 'x\\ny\\nz\\n' | tail -n 2 | wc -l", "2\n"},
		{"head -n 1 of a file, as the resize test reads a cgroup file", "printf 'max 100000\\nmore\\n' > /f; head -n 1 /f", "max 100000\n"},
		{"head -2 of stdin, and of a file without a last newline", "printf 'a\\nb\\nc' | head -2; printf 'x' > /g; head /g", "a\nb\nx"},
		{"head of two files names each", "echo 1 > /a; echo 2 > /b; head -n1 /a /b", "==> /a <==\n1\n\n==> /b <==\n2\n"},
		{"grep selects lines, -v the others, -c counts, -q says only by its status", "printf 'Name:\\tsh\\nCpus_allowed_list:\\t0-3\\n' > /s; grep Cpus /s; grep -v Cpus /s; grep -c s /s; grep -q nope /s; echo $?",
			"Cpus_allowed_list:\t0-3\nName:\tsh\n2\n1\n"},
		{"grep | cut -f2, as Kubernetes' resize test reads its CPUs", "printf 'Cpus_allowed_list:\\t0-3\\n' > /s; grep Cpus_allowed_list /s | cut -f2", "0-3\n"},
		{"cut -d: -f1,3 and -c", "echo 'root:x:0:0' | cut -d: -f1,3; echo abcdef | cut -c2-4", "root:0\nbcd\n"},
		{"awk refuses what it cannot run", "echo a | awk 'BEGIN { x = 1 }'; echo $?",
			"awk: cmd. line:1: BEGIN { x = 1 }\nawk: cmd. line:1: syntax error (only { print ... } is simulated)\n2\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			p := New(Options{Stdout: &out, Stderr: &out})
			if _, err := p.Script(context.Background(), tt.script); err != nil {
				t.Fatal(err)
			}
			if out.String() != tt.want {
				t.Errorf("got %q, want %q", out.String(), tt.want)
			}
		})
	}
}

func TestSeq(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"seq 3", "1\n2\n3\n"},
		{"seq 0 15 | wc -l", "16\n"},
		{"seq 2 3 9", "2\n5\n8\n"},
		{"seq 3 -1 1", "3\n2\n1\n"},
		{"seq 5 1", ""},
		{"seq -w 8 10", "08\n09\n10\n"},
		{"seq -s , 1 3", "1,2,3\n"},
		{"for i in $(seq 0 2); do echo x$i; done", "x0\nx1\nx2\n"},
	} {
		if got, stderr, _, _ := run(t, tc.script); got != tc.want {
			t.Errorf("%s = %q (%s), want %q", tc.script, got, stderr, tc.want)
		}
	}
}
