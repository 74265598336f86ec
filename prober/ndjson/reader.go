// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

// Package ndjson reads newline-delimited JSON streams (Ollama's native API)
// as events, with the same contract as package sse: every line is stamped
// with the time of the Read that delivered its first byte, and nothing is
// allocated per line in steady state.
package ndjson

import (
	"bytes"
	"errors"
	"io"
	"time"

	"github.com/llmslo/llm_slo_exporter/prober/sse"
)

// Reader reads one JSON value per line. Blank lines are skipped (and so
// are the carriage returns that start a line); one carriage return before
// the newline is dropped; a final line without its newline is returned
// with Unterminated set. A line's bytes before its newline, after the
// leading carriage returns, may number at most the cap.
type Reader struct {
	rd      io.Reader
	now     func() time.Time
	maxLine int

	buf       []byte
	start     int // first unconsumed byte
	end       int // end of valid bytes
	scanned   int // bytes after start known to hold no newline
	lineAt    time.Time
	haveAt    bool
	readAt    time.Time
	err       error
	ev        sse.Event
	index     int
	bytesRead int64
	lastRead  time.Time
}

// NewReader returns a Reader on r whose lines may be up to maxLine bytes
// (sse.DefaultMaxEventSize when maxLine <= 0).
func NewReader(r io.Reader, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = sse.DefaultMaxEventSize
	}
	rd := &Reader{now: time.Now, maxLine: maxLine, buf: make([]byte, 4096)}
	rd.Reset(r)
	return rd
}

// Reset makes the Reader read from r, keeping its buffer.
func (r *Reader) Reset(rd io.Reader) {
	r.rd = rd
	r.start, r.end, r.scanned = 0, 0, 0
	r.haveAt, r.err = false, nil
	r.index, r.bytesRead = 0, 0
	r.lastRead, r.readAt = time.Time{}, time.Time{}
}

// SetNow replaces the clock (nil restores time.Now).
func (r *Reader) SetNow(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	r.now = now
}

// BytesRead returns the bytes read so far.
func (r *Reader) BytesRead() int64 { return r.bytesRead }

// LastRead returns the time of the last Read that returned data.
func (r *Reader) LastRead() time.Time { return r.lastRead }

// Next returns the next line as an event (Data without the line ending).
// It returns io.EOF at the end, sse.ErrEventTooLarge for a line over the
// cap, or the read error. Errors are sticky.
func (r *Reader) Next() (*sse.Event, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		// Skip blank lines at the start of the unconsumed bytes.
		for r.start < r.end && (r.buf[r.start] == '\n' || r.buf[r.start] == '\r') {
			r.start++
			r.haveAt = false
			r.scanned = 0
		}
		if r.start < r.end && !r.haveAt {
			r.lineAt, r.haveAt = r.readAt, true
		}
		if i := bytes.IndexByte(r.buf[r.start+r.scanned:r.end], '\n'); i >= 0 {
			// The cap holds however the line arrived: a line that came
			// whole with its newline skipped the check below (the
			// first buffer, 4 KiB, exceeds a small cap).
			if r.scanned+i > r.maxLine {
				r.err = sse.ErrEventTooLarge
				return nil, r.err
			}
			line := r.buf[r.start : r.start+r.scanned+i]
			r.start += r.scanned + i + 1
			r.scanned = 0
			return r.emit(bytes.TrimSuffix(line, []byte{'\r'}), false), nil
		}
		r.scanned = r.end - r.start
		if r.scanned > r.maxLine {
			r.err = sse.ErrEventTooLarge
			return nil, r.err
		}
		if err := r.fill(); err != nil {
			if errors.Is(err, io.EOF) && r.end > r.start {
				line := r.buf[r.start:r.end]
				r.start = r.end
				r.err = io.EOF
				return r.emit(bytes.TrimSuffix(line, []byte{'\r'}), true), nil
			}
			r.err = err
			return nil, err
		}
	}
}

func (r *Reader) emit(line []byte, unterminated bool) *sse.Event {
	r.ev = sse.Event{Data: line, At: r.lineAt, Index: r.index, Unterminated: unterminated}
	r.index++
	r.haveAt = false
	return &r.ev
}

// fill reads more bytes, compacting or growing the buffer as needed.
func (r *Reader) fill() error {
	if r.start > 0 {
		n := copy(r.buf, r.buf[r.start:r.end])
		r.start, r.end = 0, n
	}
	if r.end == len(r.buf) {
		nb := make([]byte, min(2*len(r.buf), r.maxLine+2))
		if len(nb) <= len(r.buf) {
			return sse.ErrEventTooLarge
		}
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	for empty := 0; empty < 100; empty++ {
		n, err := r.rd.Read(r.buf[r.end:])
		if n > 0 {
			r.readAt = r.now()
			r.lastRead = r.readAt
			r.end += n
			r.bytesRead += int64(n)
			if !r.haveAt {
				r.lineAt, r.haveAt = r.readAt, true
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}
