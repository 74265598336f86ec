package sse

import (
	"bytes"
	"errors"
	"io"
	"time"
)

// Default option values.
const (
	// DefaultMaxEventSize is the MaxEventSize used when Options.MaxEventSize is zero or negative.
	DefaultMaxEventSize = 16 << 20
	// DefaultBufferSize is the initial buffer size used when Options.BufferSize is zero or negative.
	DefaultBufferSize = 4 << 10

	minBufferSize = 16
	// maxEmptyReads is how many consecutive (0, nil) Reads are tolerated before
	// Next gives up with io.ErrNoProgress, as bufio does.
	maxEmptyReads = 100
)

// ErrEventTooLarge is returned by Next when the field lines of one event add up
// to more than Options.MaxEventSize bytes. It is sticky: every later call to
// Next returns it again until Reset.
var ErrEventTooLarge = errors.New("sse: event exceeds maximum size")

// errInvalidRead is returned when the underlying reader reports an impossible count.
var errInvalidRead = errors.New("sse: underlying reader returned an invalid count")

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Event is one dispatched server-sent event. Its byte slices are valid only
// until the next call to Next or Reset; copy what must be kept.
//
// As the spec prescribes (and web-platform-tests eventsource/format-field-data
// checks), a blank line dispatches an event if at least one data line was seen
// since the previous blank line, even if every data value was empty, so
// `data:\n\n` yields an event with empty Data. Without any data line an event
// is dispatched only if it has an ErrorField.
type Event struct {
	// Type is the value of the last `event:` field line of the event, nil if
	// the event had none. It is empty but not nil for a bare `event:` line.
	Type []byte
	// Data is the values of the event's data lines joined with '\n' (the
	// spec's final newline stripped). It is nil if the event had no data line
	// (an event dispatched only because of ErrorField), and empty but not nil
	// for a data line with an empty value such as `data:`.
	Data []byte
	// ErrorField is the value of the last non-standard `error:` field line of
	// the event (old llama.cpp sends `error: {...}`), nil if none.
	ErrorField []byte
	// At is the time, from the reader's clock, of the Read that delivered the
	// first byte of the event's first field line. Comments and blank lines do
	// not count as field lines.
	At time.Time
	// Index is the 0-based index of this event among the events returned by
	// the reader since it was created or Reset.
	Index int
	// Unterminated reports that the stream ended (io.EOF) before the blank
	// line that should have dispatched the event. The spec discards such an
	// event; Reader returns it once so that the caller can decide, for example
	// to accept a final `data: [DONE]` without its blank line, as llama.cpp
	// sends it. A final line without its line terminator counts as complete.
	Unterminated bool
}

// Options configures a Reader. The zero value selects the defaults.
type Options struct {
	// MaxEventSize is the largest total size, in bytes, of the field lines of
	// one event, line terminators excluded (for `data: x` that is 7 bytes).
	// Comment lines do not count and may be of any length. A larger event
	// makes Next return ErrEventTooLarge. Zero or negative means
	// DefaultMaxEventSize.
	MaxEventSize int
	// BufferSize is the initial size of the read buffer, which is also the
	// largest Read the reader issues until the buffer grows. The buffer grows
	// as needed up to MaxEventSize+1 bytes. Zero or negative means
	// DefaultBufferSize; values below 16 are raised to 16.
	BufferSize int
	// Now is the clock; it is called once after every Read that returns data.
	// Nil means time.Now, whose result carries a monotonic reading.
	Now func() time.Time
}

// Reader reads events from a byte stream, stamping each with the time of the
// Read that delivered its first byte. A Reader is not safe for concurrent
// use. The zero value is not usable; create one with NewReader.
type Reader struct {
	rd      io.Reader
	now     func() time.Time
	maxSize int
	maxBuf  int

	buf []byte
	ls  int // start of the unprocessed region, always the start of a line
	w   int // end of the valid bytes in buf
	// scanned is how many bytes after ls are known to hold no line terminator,
	// so that a long line arriving in many Reads is scanned only once.
	scanned int

	readStart int       // offset in buf of the first byte of the latest Read
	readAt    time.Time // time of the latest Read that returned data
	tailAt    time.Time // time of the Read that delivered buf[ls], if ls < readStart
	lastRead  time.Time

	atStart    bool // a BOM may still be pending at the start of the stream
	skipLF     bool // the previous line ended with CR as the last available byte
	discard    bool // the rest of the current (comment) line is being dropped
	rerr       error
	err        error // sticky error returned by Next
	emptyReads int

	// Pending event.
	dataLines int
	dataInBuf bool // the only data line so far is buf[ds:de]; otherwise it is in data
	ds, de    int
	data      []byte
	typ       []byte
	hasType   bool
	errf      []byte
	hasErr    bool
	haveAt    bool
	at        time.Time
	size      int

	ev        Event
	index     int
	bytesRead int64
	comments  int
	unknown   int
}

// NewReader returns a Reader that reads events from r with the given options.
func NewReader(r io.Reader, opts Options) *Reader {
	maxSize := opts.MaxEventSize
	if maxSize <= 0 {
		maxSize = DefaultMaxEventSize
	}
	size := opts.BufferSize
	if size <= 0 {
		size = DefaultBufferSize
	}
	size = max(size, minBufferSize)
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	rd := &Reader{
		now:     now,
		maxSize: maxSize,
		// One byte more than the largest line, so that its terminator fits.
		maxBuf: max(size, maxSize+1),
		buf:    make([]byte, size),
		data:   make([]byte, 0, 256),
		typ:    make([]byte, 0, 32),
		errf:   make([]byte, 0, 32),
	}
	rd.Reset(r)
	return rd
}

// Reset discards all state, including counters, sticky errors and any pending
// event, and makes the Reader read from rd, keeping its buffers so that a
// worker can reuse Readers from a pool. The buffers keep the size they grew
// to; a pool may prefer to drop a Reader that read a very large event.
func (r *Reader) Reset(rd io.Reader) {
	r.rd = rd
	r.ls, r.w, r.scanned = 0, 0, 0
	r.readStart = 0
	r.readAt, r.tailAt, r.lastRead = time.Time{}, time.Time{}, time.Time{}
	r.atStart, r.skipLF, r.discard = true, false, false
	r.rerr, r.err, r.emptyReads = nil, nil, 0
	r.resetEvent()
	r.ev = Event{}
	r.index, r.bytesRead, r.comments, r.unknown = 0, 0, 0, 0
}

// SetNow replaces the Reader's clock; nil restores time.Now. A prober that
// already stamps every Read of the body hands its stamp in here, so that
// each Read costs one clock reading, not two.
func (r *Reader) SetNow(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	r.now = now
}

// Next returns the next event. The returned pointer and the slices it holds
// are valid only until the next call to Next or Reset; the Reader reuses them.
//
// At the clean end of the stream Next returns io.EOF. If the stream ends while
// an event is pending, Next first returns that event with Unterminated set.
// If the underlying reader fails, Next returns its error unwrapped (so that
// errors.Is and == work, e.g. for context.Canceled), after the events that
// were complete before the failure; a pending partial event is discarded.
// After ErrEventTooLarge the rest of the stream cannot be parsed. All errors,
// io.EOF included, are sticky until Reset.
func (r *Reader) Next() (*Event, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		if ev := r.scan(); ev != nil {
			return ev, nil
		}
		if r.err != nil {
			return nil, r.err
		}
		if r.rerr != nil {
			if r.rerr == io.EOF {
				return r.finish()
			}
			r.err = r.rerr
			return nil, r.err
		}
		r.fill()
	}
}

// BytesRead returns the total number of bytes read from the underlying reader
// since the Reader was created or Reset.
func (r *Reader) BytesRead() int64 { return r.bytesRead }

// LastRead returns the time of the last Read that returned data, whatever the
// data was (comments count: they prove the server is alive), or the zero time
// if there was none.
func (r *Reader) LastRead() time.Time { return r.lastRead }

// Comments returns the number of comment lines (lines starting with ':') seen
// so far.
func (r *Reader) Comments() int { return r.comments }

// UnknownFields returns the number of field lines seen so far whose name is
// none of data, event, id, retry and error. Field names are case-sensitive.
func (r *Reader) UnknownFields() int { return r.unknown }

// scan processes the complete lines in the buffer until one dispatches an
// event, which it returns. It returns nil when it needs more input or when it
// has set r.err.
func (r *Reader) scan() *Event {
	for r.ls < r.w {
		if r.skipLF {
			r.skipLF = false
			if r.buf[r.ls] == '\n' {
				r.ls++
				continue
			}
		}
		if r.atStart {
			tail := r.buf[r.ls:r.w]
			if len(tail) < len(utf8BOM) && bytes.HasPrefix(utf8BOM, tail) && r.rerr == nil {
				return nil // not yet known whether this is a BOM
			}
			r.atStart = false
			if bytes.HasPrefix(tail, utf8BOM) {
				r.ls += len(utf8BOM)
				continue
			}
		}
		i := indexEOL(r.buf[r.ls+r.scanned : r.w])
		if i < 0 {
			if r.discard || r.buf[r.ls] == ':' {
				// A comment without its terminator yet: drop what arrived, so
				// that comments never need buffer space.
				if !r.discard {
					r.comments++
					r.discard = true
				}
				r.ls, r.scanned = r.w, 0
				return nil
			}
			r.scanned = r.w - r.ls
			if r.size+r.scanned > r.maxSize {
				r.err = ErrEventTooLarge
			}
			return nil
		}
		start, end := r.ls, r.ls+r.scanned+i
		r.consumeEOL(end)
		if r.discard {
			r.discard = false
			continue
		}
		if ev := r.line(start, end); ev != nil || r.err != nil {
			return ev
		}
	}
	return nil
}

// indexEOL returns the index of the first CR or LF in b, or -1.
func indexEOL(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	var j int
	if i < 0 {
		j = bytes.IndexByte(b, '\r')
	} else {
		j = bytes.IndexByte(b[:i], '\r')
	}
	if j >= 0 {
		return j
	}
	return i
}

// consumeEOL moves ls past the line terminator at buf[end]. A CR that is the
// last available byte may be the first half of a CRLF split across Reads.
func (r *Reader) consumeEOL(end int) {
	r.scanned = 0
	if r.buf[end] == '\r' {
		if end+1 == r.w {
			r.skipLF = true
		} else if r.buf[end+1] == '\n' {
			end++
		}
	}
	r.ls = end + 1
}

// lineTime returns the time of the Read that delivered buf[start], where
// start is at or after ls.
func (r *Reader) lineTime(start int) time.Time {
	if start >= r.readStart {
		return r.readAt
	}
	return r.tailAt
}

// line processes the complete line buf[start:end] and returns the event it
// dispatches, if any.
func (r *Reader) line(start, end int) *Event {
	l := r.buf[start:end]
	if len(l) == 0 {
		return r.dispatch(false)
	}
	if l[0] == ':' {
		r.comments++
		return nil
	}
	r.size += len(l)
	if r.size > r.maxSize {
		r.err = ErrEventTooLarge
		return nil
	}
	if !r.haveAt {
		r.at = r.lineTime(start)
		r.haveAt = true
	}
	name, vs := l, end
	if c := bytes.IndexByte(l, ':'); c >= 0 {
		name = l[:c]
		vs = start + c + 1
		if vs < end && r.buf[vs] == ' ' {
			vs++
		}
	}
	switch string(name) {
	case "data":
		switch {
		case r.dataLines == 0:
			r.ds, r.de, r.dataInBuf = vs, end, true
		default:
			r.materialize()
			r.data = append(r.data, '\n')
			r.data = append(r.data, r.buf[vs:end]...)
		}
		r.dataLines++
	case "event":
		r.typ = append(r.typ[:0], r.buf[vs:end]...)
		r.hasType = true
	case "error":
		r.errf = append(r.errf[:0], r.buf[vs:end]...)
		r.hasErr = true
	case "id", "retry":
		// Reconnection state; irrelevant to a one-shot POST stream.
	default:
		r.unknown++
	}
	return nil
}

// materialize moves a data line held as offsets into buf into r.data, before
// buf is rearranged or a second data line is appended.
func (r *Reader) materialize() {
	if r.dataInBuf {
		r.data = append(r.data[:0], r.buf[r.ds:r.de]...)
		r.dataInBuf = false
	}
}

// dispatch returns the pending event, if it has data or an error field, and
// resets the pending state either way.
func (r *Reader) dispatch(unterminated bool) *Event {
	if r.dataLines == 0 && !r.hasErr {
		r.resetEvent()
		return nil
	}
	ev := &r.ev
	ev.Type, ev.Data, ev.ErrorField = nil, nil, nil
	if r.hasType {
		ev.Type = r.typ
	}
	if r.dataInBuf {
		ev.Data = r.buf[r.ds:r.de]
	} else if r.dataLines > 0 {
		ev.Data = r.data
	}
	if r.hasErr {
		ev.ErrorField = r.errf
	}
	ev.At = r.at
	ev.Index = r.index
	ev.Unterminated = unterminated
	r.index++
	r.resetEvent()
	return ev
}

func (r *Reader) resetEvent() {
	r.dataLines, r.dataInBuf, r.ds, r.de = 0, false, 0, 0
	r.data = r.data[:0]
	r.hasType, r.hasErr, r.haveAt = false, false, false
	r.at = time.Time{}
	r.size = 0
}

// finish handles io.EOF from the underlying reader once every complete line
// has been processed: the last partial line counts as complete, and a pending
// event is returned with Unterminated set.
func (r *Reader) finish() (*Event, error) {
	if r.ls < r.w {
		start, end := r.ls, r.w
		r.ls, r.scanned = r.w, 0
		if r.discard {
			r.discard = false
		} else {
			// A non-blank line cannot dispatch; it can only fail the size check.
			r.line(start, end)
			if r.err != nil {
				return nil, r.err
			}
		}
	}
	if ev := r.dispatch(true); ev != nil {
		return ev, nil
	}
	r.err = io.EOF
	return nil, io.EOF
}

// fill makes room in the buffer and issues one Read. It records the Read's
// time if it returned data, and its error in r.rerr.
func (r *Reader) fill() {
	if r.ls < r.w && r.ls >= r.readStart {
		// The partial line at ls was delivered by the latest Read.
		r.tailAt = r.readAt
	}
	n := len(r.buf)
	switch {
	case r.ls == r.w && !r.dataInBuf:
		r.ls, r.w = 0, 0
	case r.w == n || (r.ls > 0 && n-r.w < n/4):
		r.compact(r.buf)
	}
	if n-r.w < n/4 && n < r.maxBuf {
		r.compact(make([]byte, min(2*n, r.maxBuf)))
	}
	r.readStart = r.w
	m, err := r.rd.Read(r.buf[r.w:])
	if m < 0 || m > len(r.buf)-r.w {
		r.rerr = errInvalidRead
		return
	}
	if m > 0 {
		t := r.now()
		r.readAt, r.lastRead = t, t
		r.w += m
		r.bytesRead += int64(m)
		r.emptyReads = 0
	}
	if err != nil {
		r.rerr = err
		return
	}
	if m == 0 {
		r.emptyReads++
		if r.emptyReads >= maxEmptyReads {
			r.rerr = io.ErrNoProgress
		}
	}
}

// compact moves the unprocessed bytes to the start of dst and makes dst the
// buffer.
func (r *Reader) compact(dst []byte) {
	r.materialize()
	r.w = copy(dst, r.buf[r.ls:r.w])
	r.ls = 0
	r.buf = dst
}
