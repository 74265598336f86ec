// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package record

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
	"time"
)

func sampleRecord() *Record {
	return &Record{
		TargetID:     7,
		RequestID:    0xdeadbeefcafef00d,
		Reason:       OK,
		Estimated:    true,
		HTTPStatus:   200,
		Scheduled:    1_790_000_000_123_456_789,
		Lag:          120 * time.Microsecond,
		TTFT:         50 * time.Millisecond,
		TTFA:         -1,
		E2E:          130 * time.Millisecond,
		Gen:          75 * time.Millisecond,
		OutputTokens: 16,
		PromptTokens: -1,
		OutputEvents: 16,
		ITL:          []time.Duration{5 * time.Millisecond, 0, 4 * time.Millisecond, -3},
		Detail:       "",
	}
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	rec := sampleRecord()
	fail := &Record{TargetID: 1, RequestID: 1, Reason: HTTP5xx, HTTPStatus: 503, TTFT: -1, TTFA: -1, E2E: -1, Gen: -1, PromptTokens: -1, Detail: "upstream overloaded"}
	hb := &Heartbeat{Wall: time.Second, CPU: 200 * time.Millisecond, Wait: 3 * time.Millisecond, Events: 1234, ServiceSum: 0.05, ServiceSumSq: 1e-6, RSS: 20 << 20, LoopLag: []time.Duration{10 * time.Microsecond, 2 * time.Millisecond}}
	w.WriteRecord(rec)
	w.WriteDispatch(Dispatch{TargetID: 3})
	w.WriteDrop(Drop{TargetID: 4, Reason: InFlightLimit, Count: 2})
	w.WriteHeartbeat(hb)
	w.WriteAck(Ack{Generation: 9})
	w.WriteRecord(fail)
	w.WriteRaw(KindPlan, []byte(`{"x":1}`))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}

	r := NewReader(&buf)
	next := func(want Kind) {
		t.Helper()
		k, err := r.Next()
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if k != want {
			t.Fatalf("kind = %c, want %c", k, want)
		}
	}
	next(KindRecord)
	got, err := r.Record()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rec) {
		t.Errorf("record = %+v, want %+v", got, rec)
	}
	next(KindDispatch)
	if d, err := r.Dispatch(); err != nil || d.TargetID != 3 {
		t.Errorf("dispatch = %+v, %v", d, err)
	}
	next(KindDrop)
	if d, err := r.Drop(); err != nil || d != (Drop{TargetID: 4, Reason: InFlightLimit, Count: 2}) {
		t.Errorf("drop = %+v, %v", d, err)
	}
	next(KindHeartbeat)
	if h, err := r.Heartbeat(); err != nil || !reflect.DeepEqual(h, hb) {
		t.Errorf("heartbeat = %+v, %v; want %+v", h, err, hb)
	}
	next(KindAck)
	if a, err := r.Ack(); err != nil || a.Generation != 9 {
		t.Errorf("ack = %+v, %v", a, err)
	}
	next(KindRecord)
	got, err = r.Record()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.ITL) != 0 {
		t.Errorf("ITL = %v, want none", got.ITL)
	}
	got.ITL = nil
	if !reflect.DeepEqual(got, fail) {
		t.Errorf("record = %+v, want %+v", got, fail)
	}
	next(KindPlan)
	if string(r.Payload()) != `{"x":1}` {
		t.Errorf("payload = %q", r.Payload())
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("Next at end = %v, want io.EOF", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	full := AppendRecord(nil, sampleRecord())
	tests := []struct {
		name    string
		in      []byte
		nextErr error
		recErr  bool
	}{
		{name: "empty", in: nil, nextErr: io.EOF},
		{name: "short header", in: full[:2], nextErr: io.ErrUnexpectedEOF},
		{name: "short frame", in: full[:len(full)-3], nextErr: io.ErrUnexpectedEOF},
		{name: "oversized", in: []byte{0xff, 0xff, 0xff, 0x7f, 'R'}, nextErr: ErrFrameTooLarge},
		{name: "zero length", in: []byte{0, 0, 0, 0}, nextErr: ErrFrameTooLarge},
		{name: "truncated payload", in: func() []byte {
			b := append([]byte(nil), full[:12]...)
			b[0], b[1], b[2], b[3] = 8, 0, 0, 0
			return b
		}(), recErr: true},
		{name: "bad reason", in: func() []byte {
			b := append([]byte(nil), full...)
			b[5+1+8] = 200 // reason byte after uvarint(7) and the 8-byte id
			return b
		}(), recErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(bytes.NewReader(tc.in))
			_, err := r.Next()
			if tc.nextErr != nil {
				if !errors.Is(err, tc.nextErr) {
					t.Fatalf("Next error = %v, want %v", err, tc.nextErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			_, err = r.Record()
			if (err != nil) != tc.recErr {
				t.Fatalf("Record error = %v, want error %v", err, tc.recErr)
			}
		})
	}
}

func TestDropRejectsFailureReason(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.WriteDrop(Drop{TargetID: 1, Reason: Timeout, Count: 1})
	_ = w.Flush()
	r := NewReader(&buf)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Drop(); err == nil {
		t.Fatal("Drop with a failure reason decoded without error")
	}
}

func TestDerived(t *testing.T) {
	r := sampleRecord()
	if tpot, ok := r.TPOT(); !ok || tpot != 5*time.Millisecond {
		t.Errorf("TPOT = %v, %v; want 5ms", tpot, ok)
	}
	if ntpot, ok := r.NTPOT(); !ok || ntpot != 130*time.Millisecond/16 {
		t.Errorf("NTPOT = %v, %v", ntpot, ok)
	}
	r.OutputTokens = 1
	if _, ok := r.TPOT(); ok {
		t.Error("TPOT defined for N=1")
	}
	if got := RequestIDString(0xdeadbeefcafef00d); got != "deadbeefcafef00d" {
		t.Errorf("RequestIDString = %q", got)
	}
	if got := RequestIDString(1); got != "0000000000000001" {
		t.Errorf("RequestIDString = %q", got)
	}
}

func TestReasons(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range append(FailureReasons(), DropReasons()...) {
		s := r.String()
		if s == "unknown" || seen[s] {
			t.Errorf("reason %d has name %q (duplicate or missing)", r, s)
		}
		seen[s] = true
		if r.IsDrop() != (r >= InFlightLimit) {
			t.Errorf("%s: IsDrop = %v", s, r.IsDrop())
		}
	}
	if len(FailureReasons()) != 13 || len(DropReasons()) != 4 {
		t.Errorf("got %d failure and %d drop reasons", len(FailureReasons()), len(DropReasons()))
	}
}

func BenchmarkEncodeRecord(b *testing.B) {
	rec := sampleRecord()
	rec.ITL = make([]time.Duration, 31)
	for i := range rec.ITL {
		rec.ITL[i] = 10*time.Millisecond + time.Duration(i)*time.Microsecond
	}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendRecord(buf[:0], rec)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkDecodeRecord(b *testing.B) {
	rec := sampleRecord()
	rec.ITL = make([]time.Duration, 31)
	frame := AppendRecord(nil, rec)
	var stream bytes.Reader
	r := NewReader(&stream)
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		stream.Reset(frame)
		r.br.Reset(&stream)
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
		if _, err := r.Record(); err != nil {
			b.Fatal(err)
		}
	}
}
