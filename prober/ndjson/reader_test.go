// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package ndjson

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/llmslo/llm_slo_exporter/prober/sse"
)

// line is a comparable copy of an event: its data and whether the stream
// ended before its newline.
type line struct {
	data         string
	unterminated bool
}

func (x line) String() string {
	if x.unterminated {
		return x.data + " (unterminated)"
	}
	return x.data
}

func l(s string) line  { return line{data: s} }
func ul(s string) line { return line{data: s, unterminated: true} }

// readLines reads r to its terminal error. It fails the test if Index is
// not sequential or if At goes backwards.
func readLines(t testing.TB, r *Reader) ([]line, error) {
	t.Helper()
	var out []line
	var last time.Time
	for i := 0; ; i++ {
		ev, err := r.Next()
		if err != nil {
			if ev != nil {
				t.Fatalf("Next returned an event and error %v", err)
			}
			if again, err2 := r.Next(); again != nil || err2 != err {
				t.Fatalf("error %v is not sticky: then %v, %v", err, again, err2)
			}
			return out, err
		}
		if ev.Index != i {
			t.Fatalf("event %d has Index %d", i, ev.Index)
		}
		if ev.Type != nil || ev.ErrorField != nil {
			t.Fatalf("NDJSON event with a type or error field: %+v", ev)
		}
		if ev.At.Before(last) {
			t.Fatalf("event %d at %v before %v", i, ev.At, last)
		}
		last = ev.At
		out = append(out, line{string(ev.Data), ev.Unterminated})
	}
}

func TestLines(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, tc := range []struct {
		name    string
		in      string
		max     int
		want    []line
		wantErr error
	}{
		{"empty", "", 0, nil, io.EOF},
		{"two lines", "{\"a\":1}\n{\"b\":2}\n", 0, []line{l(`{"a":1}`), l(`{"b":2}`)}, io.EOF},
		{"CRLF", "a\r\nb\r\n", 0, []line{l("a"), l("b")}, io.EOF},
		{"blank lines skipped", "\n\na\n\r\n\r\nb\n\n", 0, []line{l("a"), l("b")}, io.EOF},
		{"last line without newline", "a\nb", 0, []line{l("a"), ul("b")}, io.EOF},
		{"last line with CR only", "a\nb\r", 0, []line{l("a"), ul("b")}, io.EOF},
		{"trailing blank without newline", "a\n\r", 0, []line{l("a")}, io.EOF},
		{"spaces are not blank", " \n", 0, []line{l(" ")}, io.EOF},
		{"leading CRs of a line are skipped", "\r\rx\n", 0, []line{l("x")}, io.EOF},
		{"a lone CR inside a line is kept", "a\rb\n", 0, []line{l("a\rb")}, io.EOF},
		{"one CR is trimmed at the end", "a\r\r\n", 0, []line{l("a\r")}, io.EOF},
		{"line longer than the buffer", long + "\n" + long + "\n", 0, []line{l(long), l(long)}, io.EOF},
		{"line at the cap", long + "\n", 5000, []line{l(long)}, io.EOF},
		{"line over the cap", "a\n" + long + "x\n", 5000, []line{l("a")}, sse.ErrEventTooLarge},
		{"unterminated line over the cap", long + "x", 5000, nil, sse.ErrEventTooLarge},
		{"invalid UTF-8 is passed through", "\xff\xfe\n", 0, []line{l("\xff\xfe")}, io.EOF},
		{"NUL bytes", "a\x00b\n", 0, []line{l("a\x00b")}, io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, reads := range []struct {
				name string
				r    func(string) io.Reader
			}{
				{"whole", func(s string) io.Reader { return strings.NewReader(s) }},
				{"one byte per read", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
				{"data with EOF", func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) }},
			} {
				got, err := readLines(t, NewReader(reads.r(tc.in), tc.max))
				if !slices.Equal(got, tc.want) || !errors.Is(err, tc.wantErr) {
					t.Errorf("%s: lines %q, %v; want %q, %v", reads.name, got, err, tc.want, tc.wantErr)
				}
			}
		})
	}
}

// scripted returns one scripted piece per Read.
type scripted struct {
	pieces []string
	err    error
}

func (s *scripted) Read(p []byte) (int, error) {
	if len(s.pieces) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		return 0, io.EOF
	}
	n := copy(p, s.pieces[0])
	s.pieces[0] = s.pieces[0][n:]
	if s.pieces[0] == "" {
		s.pieces = s.pieces[1:]
	}
	return n, nil
}

// TestTimestamps checks that a line carries the time of the Read that
// delivered its first byte: blank lines and earlier lines in the same
// Read lend it nothing else.
func TestTimestamps(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		name   string
		pieces []string
		want   []int // per line, the 1-based index of the Read
	}{
		{"one line per read", []string{"a\n", "b\n", "c\n"}, []int{1, 2, 3}},
		{"line split over reads", []string{"a", "b", "c\nd\n"}, []int{1, 3}},
		{"two lines in one read", []string{"a\nb\n", "c\n"}, []int{1, 1, 2}},
		{"blank lines before a line in a later read", []string{"a\n\n\n", "\n", "b\n"}, []int{1, 3}},
		{"line starting at the end of a read", []string{"a\nb", "c\n"}, []int{1, 1}},
		{"CRLF split over reads", []string{"a\r", "\nb\r\n"}, []int{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			r := NewReader(&scripted{pieces: slices.Clone(tc.pieces)}, 0)
			r.SetNow(func() time.Time { n++; return base.Add(time.Duration(n) * time.Second) })
			var got []int
			for {
				ev, err := r.Next()
				if err != nil {
					break
				}
				got = append(got, int(ev.At.Sub(base)/time.Second))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("line times %v, want reads %v", got, tc.want)
			}
			if r.LastRead() != base.Add(time.Duration(n)*time.Second) {
				t.Errorf("LastRead %v after %d reads", r.LastRead(), n)
			}
		})
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, nil }

func TestReadErrors(t *testing.T) {
	boom := errors.New("connection reset by peer")
	t.Run("error mid-line discards the partial line", func(t *testing.T) {
		got, err := readLines(t, NewReader(&scripted{pieces: []string{"a\nb"}, err: boom}, 0))
		if !slices.Equal(got, []line{l("a")}) || err != boom {
			t.Errorf("%q, %v", got, err)
		}
	})
	t.Run("no progress", func(t *testing.T) {
		if _, err := readLines(t, NewReader(errReader{}, 0)); err != io.ErrNoProgress {
			t.Errorf("error %v, want io.ErrNoProgress", err)
		}
	})
	t.Run("unexpected EOF", func(t *testing.T) {
		got, err := readLines(t, NewReader(&scripted{pieces: []string{"a\n{\"b"}, err: io.ErrUnexpectedEOF}, 0))
		if !slices.Equal(got, []line{l("a")}) || err != io.ErrUnexpectedEOF {
			t.Errorf("%q, %v", got, err)
		}
	})
}

func TestResetAndCounters(t *testing.T) {
	r := NewReader(strings.NewReader("a\nbb\n"), 0)
	if got, _ := readLines(t, r); len(got) != 2 || r.BytesRead() != 5 {
		t.Fatalf("%q, %d bytes", got, r.BytesRead())
	}
	r.Reset(strings.NewReader("c"))
	if r.BytesRead() != 0 || !r.LastRead().IsZero() {
		t.Errorf("after Reset: %d bytes, last read %v", r.BytesRead(), r.LastRead())
	}
	got, err := readLines(t, r)
	if !slices.Equal(got, []line{ul("c")}) || err != io.EOF {
		t.Errorf("after Reset: %q, %v", got, err)
	}
	// Index restarts at 0 (readLines checks it) and the sticky EOF is
	// cleared by Reset.
	r.Reset(strings.NewReader("d\n"))
	if got, _ := readLines(t, r); !slices.Equal(got, []line{l("d")}) {
		t.Errorf("%q", got)
	}
	r.SetNow(nil) // restores time.Now
	r.Reset(strings.NewReader("e\n"))
	if ev, err := r.Next(); err != nil || ev.At.IsZero() {
		t.Errorf("%+v, %v", ev, err)
	}
}

// reference splits b as the Reader documents it: lines end with \n, a
// line's leading CRs and one trailing CR are dropped, blank lines are
// skipped, and a last line without \n is unterminated.
func reference(b []byte) []line {
	var out []line
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		raw, rest, term := b, []byte(nil), false
		if i >= 0 {
			raw, rest, term = b[:i], b[i+1:], true
		}
		b = rest
		raw = bytes.TrimLeft(raw, "\r")
		if len(raw) == 0 {
			continue
		}
		out = append(out, line{string(bytes.TrimSuffix(raw, []byte{'\r'})), !term})
	}
	return out
}

// pieces returns b in pieces of sizes drawn from r.
type pieces struct {
	b []byte
	r *rand.Rand
}

func (p *pieces) Read(dst []byte) (int, error) {
	if len(p.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(dst), len(p.b), 1+p.r.IntN(9))
	copy(dst, p.b[:n])
	p.b = p.b[n:]
	return n, nil
}

func TestSplitInvariance(t *testing.T) {
	in := []byte("{\"a\":1}\r\n\n\r\n{\"message\":{\"content\":\"x\"},\"done\":false}\n\r\r{}\n" + strings.Repeat("y", 10000) + "\nlast")
	want := reference(in)
	for seed := range uint64(50) {
		got, err := readLines(t, NewReader(&pieces{b: in, r: rand.New(rand.NewPCG(seed, 1))}, 0))
		if err != io.EOF || !slices.Equal(got, want) {
			t.Fatalf("seed %d: %q, %v; want %q", seed, got, err, want)
		}
	}
}

func TestNoAllocsAfterFirstStream(t *testing.T) {
	in := []byte(strings.Repeat(`{"model":"m","message":{"role":"assistant","content":" tok"},"done":false}`+"\n", 50))
	br := bytes.NewReader(in)
	r := NewReader(br, 0)
	r.SetNow(func() time.Time { return time.Time{} })
	drain := func() {
		br.Reset(in)
		r.Reset(br)
		for {
			if _, err := r.Next(); err != nil {
				return
			}
		}
	}
	drain()
	if n := testing.AllocsPerRun(50, drain); n != 0 {
		t.Errorf("%v allocations per stream", n)
	}
}

// FuzzReader checks the Reader against reference on any bytes, read in
// pieces of sizes drawn from seed, and with a cap: never a panic, the
// same lines, and ErrEventTooLarge exactly when a line exceeds the cap.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"a\nb\n", "a\r\nb", "\n\n\r\n", "\r\rx\r\r\n", `{"message":{"content":"x"},"done":false}` + "\n" + `{"done":true}`,
		`{"error":"boom"}` + "\n", "<html>\n", "\xff\x00\n",
	} {
		f.Add([]byte(s), uint64(1), uint16(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, seed uint64, capHint uint16) {
		maxLine := 0
		if capHint > 0 {
			maxLine = 16 + int(capHint%512)
		}
		want := reference(in)
		r := NewReader(&pieces{b: in, r: rand.New(rand.NewPCG(seed, 2))}, maxLine)
		got, err := readLines(t, r)
		if maxLine > 0 {
			// The reader fails once a line (its bytes before the
			// newline, CR included) exceeds the cap.
			tooLong := -1
			for i, ln := range strings.SplitAfter(string(in), "\n") {
				body := strings.TrimLeft(strings.TrimSuffix(ln, "\n"), "\r\n")
				if len(body) > maxLine {
					tooLong = i
					break
				}
			}
			if tooLong >= 0 {
				if err != sse.ErrEventTooLarge {
					t.Fatalf("cap %d: error %v, want ErrEventTooLarge", maxLine, err)
				}
				if len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
					t.Fatalf("cap %d: lines %q before the error, reference %q", maxLine, got, want)
				}
				return
			}
		}
		if err != io.EOF {
			t.Fatalf("error %v, want io.EOF", err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("lines %q, reference %q", got, want)
		}
		if r.BytesRead() != int64(len(in)) {
			t.Fatalf("BytesRead %d of %d", r.BytesRead(), len(in))
		}
	})
}
