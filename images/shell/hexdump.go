package shell

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
)

// hexdump -C FILE... is busybox's canonical hex+ASCII display, which
// Kubernetes' "ConfigMap binary data should be reflected in volume"
// reads a binaryData key with: 16 bytes a line, their offset, the bytes
// in hex in two groups of 8, the printable ones as ASCII, a line equal
// to the one before as "*", and the length last:
//
//	00000000  de ca fe ba d0 fe ff                              |.......|
//	00000007
//
// Only -C is simulated; without a file it reads its standard input.
func hexdump(ctx context.Context, p *Process, args []string, out io.Writer) (int, error) {
	set, names := flags(args, "C")
	if !set['C'] {
		fmt.Fprintln(p.Stderr, "hexdump: only hexdump -C is simulated")
		return 1, nil
	}
	var data []byte
	code := 0
	if len(names) == 0 {
		in, err := io.ReadAll(p.stdin(ctx))
		if err != nil && ctx.Err() != nil {
			return 137, ctx.Err()
		}
		data = in
	}
	for _, name := range names { // the files are one stream, as cat would give them
		b, err := p.FS.ReadFile(name)
		if err != nil {
			fmt.Fprintf(p.Stderr, "hexdump: %s: %s\n", name, describe(err))
			code = 1
			continue
		}
		data = append(data, b...)
	}
	_, err := io.WriteString(out, canonicalHex(data))
	if s := writeStatus(p, "hexdump", err); s != 0 {
		return s, nil
	}
	return code, nil
}

// canonicalHex is data as hexdump -C prints it.
func canonicalHex(data []byte) string {
	var b strings.Builder
	var prev []byte
	squeezed := false
	for off := 0; off < len(data); off += 16 {
		line := data[off:min(off+16, len(data))]
		if len(line) == 16 && bytes.Equal(line, prev) {
			if !squeezed {
				b.WriteString("*\n")
				squeezed = true
			}
			continue
		}
		prev, squeezed = line, false
		fmt.Fprintf(&b, "%08x  ", off)
		for i := range 16 {
			if i == 8 {
				b.WriteByte(' ')
			}
			if i < len(line) {
				fmt.Fprintf(&b, "%02x ", line[i])
			} else {
				b.WriteString("   ")
			}
		}
		b.WriteString(" |")
		for _, c := range line {
			if c < 0x20 || c > 0x7e {
				c = '.'
			}
			b.WriteByte(c)
		}
		b.WriteString("|\n")
	}
	if len(data) > 0 {
		fmt.Fprintf(&b, "%08x\n", len(data))
	}
	return b.String()
}
