package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// rec is a comparable copy of an Event without its time and index. A nil
// field of the Event is recorded as the field's has-flag being false.
type rec struct {
	Type, Data, Err          string
	HasType, HasData, HasErr bool
	Unterminated             bool
}

func (r rec) String() string {
	q := func(s string, ok bool) string {
		if !ok {
			return "nil"
		}
		return strconv.Quote(s)
	}
	if len(r.Data) > 200 {
		r.Data = r.Data[:200] + fmt.Sprintf("...(%d bytes)", len(r.Data))
	}
	return fmt.Sprintf("{type=%s data=%s error=%s unterminated=%t}", q(r.Type, r.HasType), q(r.Data, r.HasData), q(r.Err, r.HasErr), r.Unterminated)
}

func recOf(e *Event) rec {
	return rec{
		Type: string(e.Type), Data: string(e.Data), Err: string(e.ErrorField),
		HasType: e.Type != nil, HasData: e.Data != nil, HasErr: e.ErrorField != nil,
		Unterminated: e.Unterminated,
	}
}

// d is a data-only event.
func d(data string) rec { return rec{Data: data, HasData: true} }

// td is an event with a type and data.
func td(typ, data string) rec { return rec{Type: typ, HasType: true, Data: data, HasData: true} }

// ud is an unterminated data-only event.
func ud(data string) rec { return rec{Data: data, HasData: true, Unterminated: true} }

// ef is an event with only an error field.
func ef(errf string) rec { return rec{Err: errf, HasErr: true} }

// result is everything observable about reading one stream, except times.
type result struct {
	events   []rec
	err      error
	comments int
	unknown  int
	bytes    int64
}

// readAll reads r to its terminal error. It fails the test if Index is not
// sequential, if At goes backwards, or if an event exceeds maxData.
func readAll(t testing.TB, r *Reader, maxData int) result {
	t.Helper()
	var res result
	var last time.Time
	for i := 0; ; i++ {
		e, err := r.Next()
		if err != nil {
			if e != nil {
				t.Fatalf("Next returned both an event and error %v", err)
			}
			res.err = err
			break
		}
		if e.Index != i {
			t.Fatalf("event %d has Index %d", i, e.Index)
		}
		if e.At.Before(last) {
			t.Fatalf("event %d: At %v before previous %v", i, e.At, last)
		}
		last = e.At
		if len(e.Data) > maxData || len(e.Type) > maxData || len(e.ErrorField) > maxData {
			t.Fatalf("event %d exceeds the cap %d: type %d data %d error %d bytes", i, maxData, len(e.Type), len(e.Data), len(e.ErrorField))
		}
		res.events = append(res.events, recOf(e))
		if i > 1<<22 {
			t.Fatal("too many events")
		}
	}
	if _, err := r.Next(); err != res.err {
		t.Fatalf("error not sticky: got %v after %v", err, res.err)
	}
	res.comments, res.unknown, res.bytes = r.Comments(), r.UnknownFields(), r.BytesRead()
	return res
}

func sameResult(t *testing.T, label string, got, want result) {
	t.Helper()
	if !slices.Equal(got.events, want.events) {
		t.Fatalf("%s: events differ\n got: %v\nwant: %v", label, got.events, want.events)
	}
	if got.err != want.err || got.comments != want.comments || got.unknown != want.unknown || got.bytes != want.bytes {
		t.Fatalf("%s: got err=%v comments=%d unknown=%d bytes=%d, want err=%v comments=%d unknown=%d bytes=%d",
			label, got.err, got.comments, got.unknown, got.bytes, want.err, want.comments, want.unknown, want.bytes)
	}
}

const (
	wptFieldParsing = "data:\x00\ndata:  2\rData:1\ndata\x00:2\ndata:1\r\x00data:4\nda-ta:3\rdata_5\ndata:3\rdata:\r\n data:32\ndata:4\n"
	wptDataField    = "data:\n\ndata\ndata\n\ndata:test\n\n"
	llamaErr        = `{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"invalid_request_error"}`
	oaiChunk        = `{"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`
	anthropic       = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\"}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0}\n\n" +
		"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
)

// bigData returns n bytes of printable, non-periodic-looking text without CR or LF.
func bigData(n int) string {
	var sb strings.Builder
	sb.Grow(n)
	for i := 0; sb.Len() < n; i++ {
		sb.WriteString(strconv.Itoa(i))
		sb.WriteByte(',')
	}
	return sb.String()[:n]
}

type framingCase struct {
	name     string
	in       string
	max      int
	want     []rec
	err      error
	comments int
	unknown  int
}

func framingCases() []framingCase {
	big := bigData(200 << 10)
	return []framingCase{
		{name: "data with space", in: "data: " + oaiChunk + "\n\n", want: []rec{d(oaiChunk)}},
		{name: "data without space", in: "data:" + oaiChunk + "\n\ndata:[DONE]\n\n", want: []rec{d(oaiChunk), d("[DONE]")}},
		{name: "only one space removed", in: "data:  two\n\ndata:\tthree\n\n", want: []rec{d(" two"), d("\tthree")}},
		{name: "value keeps colons and trailing space", in: "data: a: b \n\n", want: []rec{d("a: b ")}},
		{name: "LF", in: "data: a\n\ndata: b\n\n", want: []rec{d("a"), d("b")}},
		{name: "CRLF", in: "data: a\r\n\r\ndata: b\r\n\r\n", want: []rec{d("a"), d("b")}},
		{name: "lone CR", in: "data: a\r\rdata: b\r\r", want: []rec{d("a"), d("b")}},
		{name: "mixed line endings", in: "data: a\r\ndata: b\n\r\ndata: c\r\r\n", want: []rec{d("a\nb"), d("c")}},
		{name: "blank lines only", in: "\n\n\r\n\r\r", want: nil},
		{name: "empty stream", in: "", want: nil},
		{
			name:     "comments before and between events",
			in:       ":\n\n: keep-alive\n\ndata: a\n\n: keep-alive\n\n:\n\ndata: b\n\n: OPENROUTER PROCESSING\n\n",
			want:     []rec{d("a"), d("b")},
			comments: 5,
		},
		{name: "comment inside an event", in: "data: a\n: ping\ndata: b\n\n", want: []rec{d("a\nb")}, comments: 1},
		{name: "CRLF comment", in: ": keep-alive\r\n\r\ndata: a\r\n\r\n", want: []rec{d("a")}, comments: 1},
		{
			name: "anthropic event lines",
			in:   anthropic,
			want: []rec{
				td("message_start", `{"type":"message_start","message":{"id":"msg_1"}}`),
				td("content_block_start", `{"type":"content_block_start","index":0}`),
				td("ping", `{"type": "ping"}`),
				td("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`),
				td("message_stop", `{"type":"message_stop"}`),
			},
		},
		{name: "event type resets after dispatch", in: "event: a\ndata: 1\n\ndata: 2\n\n", want: []rec{td("a", "1"), d("2")}},
		{name: "event type resets at blank line without dispatch", in: "event: ping\n\ndata: x\n\n", want: []rec{d("x")}},
		{name: "last event line wins", in: "event: a\nevent: b\ndata: x\n\n", want: []rec{td("b", "x")}},
		{name: "empty event value", in: "event:\ndata: x\n\n", want: []rec{td("", "x")}},
		{name: "id and retry ignored", in: "id: 1\nretry: 1000\ndata: a\n\nid\nretry\n\n", want: []rec{d("a")}},
		{name: "multi-line data", in: "data: line1\ndata:line2\ndata:\ndata: line4\n\n", want: []rec{d("line1\nline2\n\nline4")}},
		{name: "BOM stripped", in: "\xEF\xBB\xBFdata: a\n\n", want: []rec{d("a")}},
		{name: "BOM only at stream start", in: "data: a\n\n\xEF\xBB\xBFdata: b\n\n", want: []rec{d("a")}, unknown: 1},
		{name: "only one BOM stripped", in: "\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n", want: nil, unknown: 1},
		{name: "partial BOM at EOF", in: "\xEF\xBB", want: nil, unknown: 1},
		{name: "unknown fields", in: "foo: bar\ndata: a\n\nData: b\n\ndata : c\n\n", want: []rec{d("a")}, unknown: 3},
		{name: "llama.cpp error field then DONE", in: "error: " + llamaErr + "\n\ndata: [DONE]\n\n", want: []rec{ef(llamaErr), d("[DONE]")}},
		{name: "error field with data", in: "error: boom\ndata: x\n\n", want: []rec{rec{Data: "x", HasData: true, Err: "boom", HasErr: true}}},
		{name: "empty data line dispatches empty data", in: "data:\n\ndata\n\n", want: []rec{d(""), d("")}},
		{name: "WPT data field parsing", in: wptDataField, want: []rec{d(""), d("\n"), d("test")}},
		{name: "WPT field parsing", in: wptFieldParsing + "\n", want: []rec{d("\x00\n 2\n1\n3\n\n4")}, unknown: 6},
		{name: "WPT field parsing unterminated", in: wptFieldParsing, want: []rec{ud("\x00\n 2\n1\n3\n\n4")}, unknown: 6},
		{name: "fields without data dispatch nothing", in: "event: x\nid: 1\n\n:\n\n", want: nil, comments: 1},
		{name: "DONE without blank line", in: "data: " + oaiChunk + "\n\ndata: [DONE]\n", want: []rec{d(oaiChunk), ud("[DONE]")}},
		{name: "DONE without newline", in: "data: " + oaiChunk + "\n\ndata: [DONE]", want: []rec{d(oaiChunk), ud("[DONE]")}},
		{name: "DONE no space CRLF without blank line", in: "data:[DONE]\r\n", want: []rec{ud("[DONE]")}},
		{name: "DONE ended by lone CR", in: "data: [DONE]\r", want: []rec{ud("[DONE]")}},
		{name: "EOF mid-event", in: "data: a\n\ndata: b\ndata: c", want: []rec{d("a"), ud("b\nc")}},
		{name: "EOF mid-event with type", in: "event: x\ndata: part", want: []rec{rec{Type: "x", HasType: true, Data: "part", HasData: true, Unterminated: true}}},
		{name: "EOF after event line only", in: "data: a\n\nevent: x\n", want: []rec{d("a")}},
		{name: "EOF after error line", in: "error: oops", want: []rec{rec{Err: "oops", HasErr: true, Unterminated: true}}},
		{name: "EOF mid-comment", in: "data: a\n\n: keep-al", want: []rec{d("a")}, comments: 1},
		{name: "200 KiB event under 1 MiB cap", in: "data: a\n\ndata: " + big + "\n\ndata: b\n\n", max: 1 << 20, want: []rec{d("a"), d(big), d("b")}},
		{name: "200 KiB event over 100 KiB cap", in: "data: a\n\ndata: " + big + "\n\ndata: b\n\n", max: 100 << 10, want: []rec{d("a")}, err: ErrEventTooLarge},
		{name: "unterminated event over cap", in: "data: a\n\ndata: " + big, max: 100 << 10, want: []rec{d("a")}, err: ErrEventTooLarge},
		{name: "line exactly at cap", in: "data: 0123456789\n\n", max: 16, want: []rec{d("0123456789")}},
		{name: "line one over cap", in: "data: 0123456789A\n\n", max: 16, err: ErrEventTooLarge},
		{name: "lines exactly at cap", in: "event: ab\ndata: 1234567\n\n", max: 22, want: []rec{td("ab", "1234567")}},
		{name: "lines one over cap", in: "event: ab\ndata: 12345678\n\n", max: 22, err: ErrEventTooLarge},
		{name: "cap is per event", in: "data: 0123456789\n\ndata: 0123456789\n\n", max: 16, want: []rec{d("0123456789"), d("0123456789")}},
		{name: "long comment under small cap", in: ": " + bigData(1000) + "\n\ndata: ok\n\n", max: 16, want: []rec{d("ok")}, comments: 1},
	}
}

func TestFraming(t *testing.T) {
	for _, tc := range framingCases() {
		for _, bufSize := range []int{16, 0} {
			t.Run(fmt.Sprintf("%s/buf=%d", tc.name, bufSize), func(t *testing.T) {
				err := tc.err
				if err == nil {
					err = io.EOF
				}
				want := result{events: tc.want, err: err, comments: tc.comments, unknown: tc.unknown, bytes: int64(len(tc.in))}
				r := NewReader(strings.NewReader(tc.in), Options{MaxEventSize: tc.max, BufferSize: bufSize})
				limit := tc.max
				if limit == 0 {
					limit = DefaultMaxEventSize
				}
				got := readAll(t, r, limit)
				if tc.err != nil {
					got.bytes = want.bytes // reading stops early
				}
				sameResult(t, "read", got, want)
			})
		}
	}
}

// scripted is a reader returning one scripted chunk per Read ("" means a
// (0, nil) Read), then io.EOF.
type scripted struct {
	chunks []string
	cur    string
	i      int
	reads  int // Reads that returned data
}

func (s *scripted) Read(p []byte) (int, error) {
	if s.cur == "" {
		if s.i == len(s.chunks) {
			return 0, io.EOF
		}
		s.cur = s.chunks[s.i]
		s.i++
		if s.cur == "" {
			return 0, nil
		}
	}
	n := copy(p, s.cur)
	s.cur = s.cur[n:]
	s.reads++
	return n, nil
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fakeClock returns epoch + k seconds on its k-th call.
type fakeClock struct{ calls int }

func (c *fakeClock) Now() time.Time {
	c.calls++
	return epoch.Add(time.Duration(c.calls) * time.Second)
}

func TestTimestamps(t *testing.T) {
	big := bigData(10 << 10)
	var bigChunks []string
	for s := "data: " + big + "\n\n"; s != ""; {
		n := min(100, len(s))
		bigChunks = append(bigChunks, s[:n])
		s = s[n:]
	}
	cases := []struct {
		name   string
		chunks []string
		buf    int
		want   []int // per event: 1-based number of the Read (among Reads with data) that stamped it
	}{
		{name: "several events in one read share its time", chunks: []string{"data: a\n\ndata: b\n\ndata: c\n\n"}, want: []int{1, 1, 1}},
		{name: "events in successive reads", chunks: []string{"data: a\n\n", "data: b\n\n", "data: c\n\n"}, want: []int{1, 2, 3}},
		{name: "event split across reads gets the first", chunks: []string{"da", "ta: a", "\n", "\n"}, want: []int{1}},
		{name: "only first byte in first read", chunks: []string{"data: a\n\nd", "ata: b\n\n"}, want: []int{1, 1}},
		{name: "blank line in next read", chunks: []string{"data: a\n\n", "data: b\n", "\n"}, want: []int{1, 2}},
		{name: "comment-only reads do not count", chunks: []string{": keep-alive\n\n", ":\n\n", "data: a\n\n"}, want: []int{3}},
		{name: "comment split across reads", chunks: []string{": keep", "-alive\n\ndata: a\n\n"}, want: []int{2}},
		{name: "comment then event start in later read", chunks: []string{": ka\n\nda", "ta: a\n\n"}, want: []int{1}},
		{name: "comment-only read then split event", chunks: []string{": ka\n\n", "data: a", "\n\n"}, want: []int{2}},
		{name: "blank-line reads do not count", chunks: []string{"\n", "\r\n", "data: a\n\n"}, want: []int{3}},
		{name: "event line is the first field line", chunks: []string{"event: x\n", "data: y\n\n"}, want: []int{1}},
		{name: "id line is a field line", chunks: []string{"id: 7\n", "data: y\n\n"}, want: []int{1}},
		{name: "fields without data do not stamp the next event", chunks: []string{"event: ping\n\n", "data: y\n\n"}, want: []int{2}},
		{name: "comment inside event", chunks: []string{"data: a\n", ": ping\n", "data: b\n\n"}, want: []int{1}},
		{name: "CRLF split across reads", chunks: []string{"data: a\r", "\n\r\ndata: b\r", "\r"}, want: []int{1, 2}},
		{name: "BOM split across reads", chunks: []string{"\xEF\xBB", "\xBF", "data: a\n\n"}, want: []int{3}},
		{name: "BOM tail with data", chunks: []string{"\xEF", "\xBB\xBFdata: a\n\n"}, want: []int{2}},
		{name: "empty reads do not call the clock", chunks: []string{"", "data: a\n", "", "", "\n"}, want: []int{1}},
		{name: "partial line kept over empty reads", chunks: []string{"data: a\n\ndata: b", "", "", "\n\n"}, want: []int{1, 1}},
		{name: "unterminated event at EOF", chunks: []string{"data: a\n\n", "data: [DONE]"}, want: []int{1, 2}},
		{name: "large event in small reads and small buffer", chunks: append([]string{"data: x\n\n"}, bigChunks...), buf: 16, want: []int{1, 2}},
		{name: "large event after event in same read", chunks: append([]string{"data: x\n\n" + bigChunks[0]}, bigChunks[1:]...), buf: 16, want: []int{1, 1}},
		{name: "large event after comment read", chunks: append([]string{": ka\n\n"}, bigChunks...), buf: 16, want: []int{2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{}
			sr := &scripted{chunks: tc.chunks}
			r := NewReader(sr, Options{Now: clock.Now, BufferSize: tc.buf})
			var got []int
			for {
				e, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, int(e.At.Sub(epoch)/time.Second))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("event read numbers = %v, want %v", got, tc.want)
			}
			reads := sr.reads
			if clock.calls != reads {
				t.Fatalf("clock called %d times for %d reads with data", clock.calls, reads)
			}
			if want := epoch.Add(time.Duration(reads) * time.Second); !r.LastRead().Equal(want) {
				t.Fatalf("LastRead = %v, want %v", r.LastRead(), want)
			}
		})
	}
}

func TestLastReadAdvancesOnComments(t *testing.T) {
	clock := &fakeClock{}
	r := NewReader(&scripted{chunks: []string{"data: a\n\n", ": keep-alive\n\n", ":\n\n"}}, Options{Now: clock.Now})
	if !r.LastRead().IsZero() {
		t.Fatalf("LastRead before any read = %v, want zero", r.LastRead())
	}
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if !e.At.Equal(epoch.Add(time.Second)) || !r.LastRead().Equal(epoch.Add(time.Second)) {
		t.Fatalf("after first event: At=%v LastRead=%v, want both read 1", e.At, r.LastRead())
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("got %v, want io.EOF", err)
	}
	if want := epoch.Add(3 * time.Second); !r.LastRead().Equal(want) {
		t.Fatalf("LastRead = %v, want %v (comment reads are liveness)", r.LastRead(), want)
	}
	if r.Comments() != 2 || r.BytesRead() != int64(len("data: a\n\n: keep-alive\n\n:\n\n")) {
		t.Fatalf("Comments=%d BytesRead=%d", r.Comments(), r.BytesRead())
	}
}

func TestDefaultClock(t *testing.T) {
	before := time.Now()
	r := NewReader(strings.NewReader("data: a\n\n"), Options{})
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if e.At.Before(before) || e.At.After(time.Now()) {
		t.Fatalf("At = %v outside the test's run", e.At)
	}
}

var errBoom = errors.New("boom")

// zeroReader returns (0, nil) forever.
type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

// badReader claims to have read more than it was given.
type badReader struct{}

func (badReader) Read(p []byte) (int, error) { return len(p) + 1, nil }

func TestReadErrors(t *testing.T) {
	cases := []struct {
		name string
		rd   io.Reader
		want []rec
		err  error
	}{
		{
			name: "error after complete event discards the partial one",
			rd:   io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(errBoom)),
			want: []rec{d("a")},
			err:  errBoom,
		},
		{
			name: "error delivered with the last data",
			rd:   iotest.DataErrReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b\n\n"), iotest.ErrReader(errBoom))),
			want: []rec{d("a"), d("b")},
			err:  errBoom,
		},
		{name: "unexpected EOF is not EOF", rd: io.MultiReader(strings.NewReader("data: a\n"), iotest.ErrReader(io.ErrUnexpectedEOF)), err: io.ErrUnexpectedEOF},
		{name: "no progress", rd: zeroReader{}, err: io.ErrNoProgress},
		{name: "invalid count", rd: badReader{}, err: errInvalidRead},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := readAll(t, NewReader(tc.rd, Options{}), DefaultMaxEventSize)
			if !slices.Equal(got.events, tc.want) || got.err != tc.err {
				t.Fatalf("got %v, %v; want %v, %v", got.events, got.err, tc.want, tc.err)
			}
		})
	}
}

func TestReset(t *testing.T) {
	r := NewReader(strings.NewReader(": c\n\nfoo\ndata: "+bigData(10000)+"\n\ndata: partial"), Options{BufferSize: 16})
	first := readAll(t, r, DefaultMaxEventSize)
	if len(first.events) != 2 || first.err != io.EOF || first.comments != 1 || first.unknown != 1 {
		t.Fatalf("first stream: %d events, err %v, comments %d, unknown %d", len(first.events), first.err, first.comments, first.unknown)
	}
	clock := &fakeClock{}
	r.now = clock.Now // Reset keeps the options; swap the clock to check LastRead restarts.
	r.Reset(strings.NewReader("\xEF\xBB\xBFevent: x\ndata: y\n\n"))
	if r.BytesRead() != 0 || r.Comments() != 0 || r.UnknownFields() != 0 || !r.LastRead().IsZero() {
		t.Fatalf("counters not reset: bytes %d comments %d unknown %d last %v", r.BytesRead(), r.Comments(), r.UnknownFields(), r.LastRead())
	}
	e, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := recOf(e), td("x", "y"); got != want || e.Index != 0 || !e.At.Equal(epoch.Add(time.Second)) {
		t.Fatalf("after Reset got %s index %d at %v, want %s index 0 at read 1", got, e.Index, e.At, want)
	}
	// Reset clears a sticky error.
	r.Reset(strings.NewReader("data: " + bigData(100) + "\n\n"))
	r.maxSize = 10
	if _, err := r.Next(); err != ErrEventTooLarge {
		t.Fatalf("got %v, want ErrEventTooLarge", err)
	}
	r.maxSize = DefaultMaxEventSize
	r.Reset(strings.NewReader("data: z\n\n"))
	if e, err := r.Next(); err != nil || string(e.Data) != "z" {
		t.Fatalf("after Reset from error: %v, %v", e, err)
	}
}

// openAIStream is a realistic chat completion stream: a role chunk, 32
// content chunks of about 200 bytes, a usage chunk and [DONE].
func openAIStream() []string {
	const head = `{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_44709d6fcb","choices":[`
	events := []string{"data: " + head + `{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n"}
	for i := range 32 {
		events = append(events, "data: "+head+`{"index":0,"delta":{"content":" word`+strconv.Itoa(i)+`"},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n")
	}
	events = append(events,
		"data: "+head+`],"usage":{"prompt_tokens":19,"completion_tokens":32,"total_tokens":51,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`+"\n\n",
		"data: [DONE]\n\n")
	return events
}

// corpus returns streams covering all framing variants, for the property and
// fuzz tests.
func corpus() []string {
	var c []string
	for _, tc := range framingCases() {
		if len(tc.in) < 64<<10 {
			c = append(c, tc.in)
		}
	}
	oai := strings.Join(openAIStream(), "")
	c = append(c,
		oai,
		strings.ReplaceAll(oai, "\n", "\r\n"),
		strings.ReplaceAll(oai, "\n", "\r"),
		"\xEF\xBB\xBF: hi\r\n\r\n"+strings.ReplaceAll(anthropic, "\n", "\r"),
		": keep-alive\n\n:\n\n"+strings.ReplaceAll(oai, "data: ", "data:")+": keep-alive\n\n",
		strings.TrimSuffix(oai, "\n\n"),
		"data: "+bigData(10000)+"\r\n\r\ndata: a\r",
	)
	return c
}

func readChunks(t testing.TB, in string, sizes func() int, opts Options) result {
	t.Helper()
	return readAll(t, NewReader(&chunkReader{s: in, size: sizes}, opts), DefaultMaxEventSize)
}

// chunkReader returns s in chunks whose sizes size chooses.
type chunkReader struct {
	s    string
	size func() int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.size())], c.s)
	c.s = c.s[n:]
	return n, nil
}

func TestSplitInvariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i, in := range corpus() {
		for _, bufSize := range []int{16, 0} {
			t.Run(fmt.Sprintf("stream%d/buf=%d", i, bufSize), func(t *testing.T) {
				opts := Options{BufferSize: bufSize, Now: (&fakeClock{}).Now}
				whole := readAll(t, NewReader(strings.NewReader(in), Options{BufferSize: len(in) + 1}), DefaultMaxEventSize)
				for split := 0; split <= len(in); split++ {
					first := true
					got := readChunks(t, in, func() int {
						if first {
							first = false
							return split
						}
						return len(in)
					}, opts)
					sameResult(t, fmt.Sprintf("split at %d", split), got, whole)
				}
				for iter := range 200 {
					limit := 1 + rng.IntN(64)
					if iter%4 == 0 {
						limit = 1 + rng.IntN(len(in)+1)
					}
					got := readChunks(t, in, func() int { return rng.IntN(limit + 1) }, opts)
					sameResult(t, fmt.Sprintf("random chunks %d (limit %d)", iter, limit), got, whole)
				}
				for _, rd := range []io.Reader{
					iotest.OneByteReader(strings.NewReader(in)),
					iotest.HalfReader(strings.NewReader(in)),
					iotest.DataErrReader(strings.NewReader(in)),
				} {
					got := readAll(t, NewReader(rd, opts), DefaultMaxEventSize)
					sameResult(t, fmt.Sprintf("%T", rd), got, whole)
				}
			})
		}
	}
}

func TestNoAllocsAfterFirstStream(t *testing.T) {
	stream := []byte(strings.Join(openAIStream(), ""))
	chunks := openAIStream()
	split := &eventReader{chunks: chunks}
	br := bytes.NewReader(stream)
	r := NewReader(br, Options{})
	clock := &fakeClock{}
	r2 := NewReader(split, Options{Now: clock.Now})
	typed := []byte(strings.Repeat(anthropic, 4))
	run := func() {
		br.Reset(stream)
		r.Reset(br)
		n := drain(r)
		split.i = 0
		r2.Reset(split)
		n += drain(r2)
		br.Reset(typed)
		r.Reset(br)
		n += drain(r)
		if n != 2*len(chunks)+4*5 {
			t.Fatalf("read %d events, want %d", n, 2*len(chunks)+4*5)
		}
	}
	run()
	if allocs := testing.AllocsPerRun(50, run); allocs != 0 {
		t.Fatalf("%v allocations per stream, want 0", allocs)
	}
}

func drain(r *Reader) int {
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			return n
		}
		n++
	}
}

// eventReader returns one chunk per Read, as a server flushing per event does.
type eventReader struct {
	chunks []string
	i      int
}

func (e *eventReader) Read(p []byte) (int, error) {
	if e.i == len(e.chunks) {
		return 0, io.EOF
	}
	n := copy(p, e.chunks[e.i])
	e.i++ // chunks are smaller than the buffer
	return n, nil
}

func FuzzReader(f *testing.F) {
	for _, s := range corpus() {
		f.Add([]byte(s))
	}
	const maxSize = 256
	f.Fuzz(func(t *testing.T, in []byte) {
		whole := readAll(t, NewReader(bytes.NewReader(in), Options{MaxEventSize: maxSize, BufferSize: len(in) + 1}), maxSize)
		if len(whole.events) > len(in) {
			t.Fatalf("%d events from %d bytes", len(whole.events), len(in))
		}
		if whole.err == io.EOF && whole.bytes != int64(len(in)) {
			t.Fatalf("BytesRead %d at EOF, want %d", whole.bytes, len(in))
		}
		bytewise := readAll(t, NewReader(iotest.OneByteReader(bytes.NewReader(in)), Options{MaxEventSize: maxSize, BufferSize: 16}), maxSize)
		if whole.err != io.EOF {
			bytewise.bytes = whole.bytes // reading stops at different points
		}
		sameResult(t, "one-byte reads", bytewise, whole)
	})
}

func BenchmarkReader(b *testing.B) {
	chunks := openAIStream()
	stream := []byte(strings.Join(chunks, ""))
	b.Run("whole", func(b *testing.B) {
		br := bytes.NewReader(stream)
		r := NewReader(br, Options{})
		b.SetBytes(int64(len(stream)))
		b.ReportAllocs()
		for b.Loop() {
			br.Reset(stream)
			r.Reset(br)
			if n := drain(r); n != len(chunks) {
				b.Fatalf("%d events", n)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(chunks)), "ns/event")
	})
	b.Run("read-per-event", func(b *testing.B) {
		er := &eventReader{chunks: chunks}
		r := NewReader(er, Options{})
		b.SetBytes(int64(len(stream)))
		b.ReportAllocs()
		for b.Loop() {
			er.i = 0
			r.Reset(er)
			if n := drain(r); n != len(chunks) {
				b.Fatalf("%d events", n)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(chunks)), "ns/event")
	})
}
