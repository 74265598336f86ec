// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package record

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"
)

// Kind is the type of a frame.
type Kind byte

// Frame kinds. Worker to supervisor: KindRecord, KindDispatch, KindDrop,
// KindHeartbeat, KindAck. Supervisor to worker: KindPlan.
const (
	KindRecord    Kind = 'R'
	KindDispatch  Kind = 'D'
	KindDrop      Kind = 'X'
	KindHeartbeat Kind = 'H'
	KindAck       Kind = 'A'
	KindPlan      Kind = 'P'
)

// MaxFrameSize bounds one frame. A Record's size is dominated by its ITL
// gaps (a few bytes each), so this allows streams of several hundred
// thousand events per probe.
const MaxFrameSize = 4 << 20

// ErrFrameTooLarge is returned for a frame over MaxFrameSize: the stream is
// corrupt or not ours.
var ErrFrameTooLarge = errors.New("record: frame too large")

// The frame layout is a 4-byte little-endian length n, then n bytes: one
// Kind byte and the payload. Integers in payloads are varints, so a typical
// 32-token record takes about 120 bytes. A binary format rather than JSON
// keeps the worker's hot path free of reflection and allocation.

// Writer encodes frames into an in-memory batch that Flush writes out with
// one write. Encoding takes a mutex but no system call, so probes can
// report from the timed path; a worker flushes from a separate goroutine,
// which under GOMAXPROCS=1 runs when the probes are blocked on the network
// and so batches everything produced in one scheduling round.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
	spare   []byte
	notify  chan struct{}
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, notify: make(chan struct{}, 1)}
}

// Notify returns a channel that receives a value when frames are pending.
func (w *Writer) Notify() <-chan struct{} { return w.notify }

// Flush writes the pending frames. Only one goroutine may call Flush.
func (w *Writer) Flush() error {
	w.mu.Lock()
	buf := w.pending
	w.pending = w.spare[:0]
	w.mu.Unlock()
	if len(buf) == 0 {
		w.spare = buf
		return nil
	}
	_, err := w.w.Write(buf)
	w.mu.Lock()
	w.spare = buf[:0]
	w.mu.Unlock()
	return err
}

// begin starts a frame and returns the buffer with the header reserved;
// finish fills the length in. The caller holds w.mu between them.
func begin(buf []byte, k Kind) ([]byte, int) {
	start := len(buf)
	buf = append(buf, 0, 0, 0, 0, byte(k))
	return buf, start
}

func finish(buf []byte, start int) []byte {
	binary.LittleEndian.PutUint32(buf[start:], uint32(len(buf)-start-4))
	return buf
}

func (w *Writer) signal() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// WriteRecord queues r.
func (w *Writer) WriteRecord(r *Record) {
	w.mu.Lock()
	w.pending = AppendRecord(w.pending, r)
	w.mu.Unlock()
	w.signal()
}

// WriteDispatch queues d.
func (w *Writer) WriteDispatch(d Dispatch) {
	w.mu.Lock()
	buf, start := begin(w.pending, KindDispatch)
	buf = binary.AppendUvarint(buf, uint64(d.TargetID))
	w.pending = finish(buf, start)
	w.mu.Unlock()
	w.signal()
}

// WriteDrop queues d.
func (w *Writer) WriteDrop(d Drop) {
	w.mu.Lock()
	buf, start := begin(w.pending, KindDrop)
	buf = binary.AppendUvarint(buf, uint64(d.TargetID))
	buf = append(buf, byte(d.Reason))
	buf = binary.AppendUvarint(buf, uint64(d.Count))
	w.pending = finish(buf, start)
	w.mu.Unlock()
	w.signal()
}

// WriteHeartbeat queues h.
func (w *Writer) WriteHeartbeat(h *Heartbeat) {
	w.mu.Lock()
	buf, start := begin(w.pending, KindHeartbeat)
	buf = binary.AppendVarint(buf, int64(h.Wall))
	buf = binary.AppendVarint(buf, int64(h.CPU))
	buf = binary.AppendVarint(buf, int64(h.Wait))
	buf = binary.AppendUvarint(buf, h.Events)
	buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(h.ServiceSum))
	buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(h.ServiceSumSq))
	buf = binary.AppendUvarint(buf, h.RSS)
	buf = binary.AppendUvarint(buf, uint64(len(h.LoopLag)))
	for _, l := range h.LoopLag {
		buf = binary.AppendVarint(buf, int64(l))
	}
	w.pending = finish(buf, start)
	w.mu.Unlock()
	w.signal()
}

// WriteAck queues a.
func (w *Writer) WriteAck(a Ack) {
	w.mu.Lock()
	buf, start := begin(w.pending, KindAck)
	buf = binary.AppendUvarint(buf, a.Generation)
	w.pending = finish(buf, start)
	w.mu.Unlock()
	w.signal()
}

// WriteRaw queues a frame of kind k with payload p (used for plans, which
// are JSON).
func (w *Writer) WriteRaw(k Kind, p []byte) {
	w.mu.Lock()
	buf, start := begin(w.pending, k)
	buf = append(buf, p...)
	w.pending = finish(buf, start)
	w.mu.Unlock()
	w.signal()
}

// AppendRecord appends r as a frame to buf.
func AppendRecord(buf []byte, r *Record) []byte {
	buf, start := begin(buf, KindRecord)
	buf = binary.AppendUvarint(buf, uint64(r.TargetID))
	buf = binary.LittleEndian.AppendUint64(buf, r.RequestID)
	buf = append(buf, byte(r.Reason))
	var flags byte
	if r.Estimated {
		flags |= 1
	}
	buf = append(buf, flags)
	buf = binary.AppendUvarint(buf, uint64(r.HTTPStatus))
	buf = binary.AppendVarint(buf, r.Scheduled)
	buf = binary.AppendVarint(buf, int64(r.Lag))
	buf = binary.AppendVarint(buf, int64(r.TTFT))
	buf = binary.AppendVarint(buf, int64(r.TTFA))
	buf = binary.AppendVarint(buf, int64(r.E2E))
	buf = binary.AppendVarint(buf, int64(r.Gen))
	buf = binary.AppendVarint(buf, int64(r.OutputTokens))
	buf = binary.AppendVarint(buf, int64(r.PromptTokens))
	buf = binary.AppendUvarint(buf, uint64(r.OutputEvents))
	buf = binary.AppendUvarint(buf, uint64(len(r.ITL)))
	for _, g := range r.ITL {
		buf = binary.AppendVarint(buf, int64(g))
	}
	d := r.Detail
	if len(d) > 512 {
		d = d[:512]
	}
	buf = binary.AppendUvarint(buf, uint64(len(d)))
	buf = append(buf, d...)
	return finish(buf, start)
}

// Reader decodes frames. The values it returns are reused by the next call
// to Next.
type Reader struct {
	br  *bufio.Reader
	buf []byte
	rec Record
	hb  Heartbeat
	p   payload
}

// NewReader returns a Reader on r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Next reads the next frame and returns its kind. It returns io.EOF at a
// clean end and io.ErrUnexpectedEOF inside a frame.
func (r *Reader) Next() (Kind, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r.br, hdr[:]); err != nil {
		return 0, err
	}
	n := binary.LittleEndian.Uint32(hdr[:])
	if n == 0 || n > MaxFrameSize {
		return 0, ErrFrameTooLarge
	}
	if cap(r.buf) < int(n) {
		r.buf = make([]byte, n)
	}
	r.buf = r.buf[:n]
	if _, err := io.ReadFull(r.br, r.buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	return Kind(r.buf[0]), nil
}

// Payload returns the current frame's payload (valid until Next).
func (r *Reader) Payload() []byte { return r.buf[1:] }

// Record decodes the current frame as a Record.
func (r *Reader) Record() (*Record, error) {
	r.p = payload{b: r.buf[1:]}
	p := &r.p
	rec := &r.rec
	rec.Reset()
	rec.TargetID = uint32(p.uvarint())
	rec.RequestID = p.uint64()
	rec.Reason = Reason(p.byte())
	rec.Estimated = p.byte()&1 != 0
	rec.HTTPStatus = int(p.uvarint())
	rec.Scheduled = p.varint()
	rec.Lag = time.Duration(p.varint())
	rec.TTFT = time.Duration(p.varint())
	rec.TTFA = time.Duration(p.varint())
	rec.E2E = time.Duration(p.varint())
	rec.Gen = time.Duration(p.varint())
	rec.OutputTokens = int(p.varint())
	rec.PromptTokens = int(p.varint())
	rec.OutputEvents = int(p.uvarint())
	n := p.uvarint()
	if n > uint64(len(p.b)) {
		return nil, fmt.Errorf("record: %d ITL gaps in a %d-byte payload", n, len(p.b))
	}
	for i := uint64(0); i < n; i++ {
		rec.ITL = append(rec.ITL, time.Duration(p.varint()))
	}
	dl := p.uvarint()
	rec.Detail = string(p.bytes(dl))
	if p.err != nil {
		return nil, p.err
	}
	if !rec.Reason.Valid() {
		return nil, fmt.Errorf("record: unknown reason %d", rec.Reason)
	}
	return rec, nil
}

// Dispatch decodes the current frame as a Dispatch.
func (r *Reader) Dispatch() (Dispatch, error) {
	p := payload{b: r.buf[1:]}
	d := Dispatch{TargetID: uint32(p.uvarint())}
	return d, p.err
}

// Drop decodes the current frame as a Drop.
func (r *Reader) Drop() (Drop, error) {
	p := payload{b: r.buf[1:]}
	d := Drop{TargetID: uint32(p.uvarint()), Reason: Reason(p.byte()), Count: uint32(p.uvarint())}
	if p.err == nil && (!d.Reason.Valid() || !d.Reason.IsDrop()) {
		return d, fmt.Errorf("record: %d is not a drop reason", d.Reason)
	}
	return d, p.err
}

// Heartbeat decodes the current frame as a Heartbeat.
func (r *Reader) Heartbeat() (*Heartbeat, error) {
	p := payload{b: r.buf[1:]}
	h := &r.hb
	lags := h.LoopLag[:0]
	*h = Heartbeat{
		Wall:         time.Duration(p.varint()),
		CPU:          time.Duration(p.varint()),
		Wait:         time.Duration(p.varint()),
		Events:       p.uvarint(),
		ServiceSum:   math.Float64frombits(p.uint64()),
		ServiceSumSq: math.Float64frombits(p.uint64()),
		RSS:          p.uvarint(),
	}
	n := p.uvarint()
	if n > uint64(len(p.b)) {
		return nil, fmt.Errorf("record: %d lag samples in a %d-byte payload", n, len(p.b))
	}
	for i := uint64(0); i < n; i++ {
		lags = append(lags, time.Duration(p.varint()))
	}
	h.LoopLag = lags
	return h, p.err
}

// Ack decodes the current frame as an Ack.
func (r *Reader) Ack() (Ack, error) {
	p := payload{b: r.buf[1:]}
	a := Ack{Generation: p.uvarint()}
	return a, p.err
}

// payload is a cursor over a frame's payload that records the first error
// and returns zeros after it, so decoders read straight through.
type payload struct {
	b   []byte
	err error
}

var errShort = errors.New("record: truncated payload")

func (p *payload) fail() {
	if p.err == nil {
		p.err = errShort
	}
	p.b = nil
}

func (p *payload) uvarint() uint64 {
	v, n := binary.Uvarint(p.b)
	if n <= 0 {
		p.fail()
		return 0
	}
	p.b = p.b[n:]
	return v
}

func (p *payload) varint() int64 {
	v, n := binary.Varint(p.b)
	if n <= 0 {
		p.fail()
		return 0
	}
	p.b = p.b[n:]
	return v
}

func (p *payload) byte() byte {
	if len(p.b) < 1 {
		p.fail()
		return 0
	}
	c := p.b[0]
	p.b = p.b[1:]
	return c
}

func (p *payload) uint64() uint64 {
	if len(p.b) < 8 {
		p.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(p.b)
	p.b = p.b[8:]
	return v
}

func (p *payload) bytes(n uint64) []byte {
	if n > uint64(len(p.b)) {
		p.fail()
		return nil
	}
	v := p.b[:n]
	p.b = p.b[n:]
	return v
}
