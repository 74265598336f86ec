// Copyright 2026 The llm_slo_exporter Authors
// SPDX-License-Identifier: Apache-2.0

package schedule

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Precise is a Clock whose timers wake on time to within tens of
// microseconds, where Go's own timers wake up to a millisecond late.
//
// Why: Go's scheduler sleeps in epoll_wait with a millisecond timeout
// (runtime/netpoll_epoll.go rounds any delay under 1 ms up to 1 ms and
// truncates longer ones), so an idle process's timers fire 0.5 ms late on
// average and 1 ms late at worst. That lateness would be every probe's
// schedule lag. A timerfd armed for the deadline and registered with the
// same netpoller wakes epoll_wait itself when it expires, at hrtimer
// precision (timer slack does not apply to timerfd).
type Precise struct{}

// Now returns time.Now().
func (Precise) Now() time.Time { return time.Now() }

// NewTimer returns a timerfd-backed timer, or a Go timer if timerfd is
// not available.
func (Precise) NewTimer(d time.Duration) Timer {
	t, err := newFDTimer()
	if err != nil {
		return System{}.NewTimer(d)
	}
	t.Reset(d)
	return t
}

type fdTimer struct {
	f    *os.File
	fd   int
	c    chan time.Time
	once sync.Once
}

func newFDTimer() (*fdTimer, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	// A non-blocking fd makes os.NewFile register it with the netpoller,
	// so a Read parks the goroutine, not the thread.
	t := &fdTimer{f: os.NewFile(uintptr(fd), "timerfd"), fd: fd, c: make(chan time.Time, 1)}
	go t.loop()
	return t, nil
}

func (t *fdTimer) loop() {
	var buf [8]byte
	for {
		if _, err := t.f.Read(buf[:]); err != nil {
			return // closed by Stop
		}
		select {
		case t.c <- time.Now():
		default:
		}
	}
}

func (t *fdTimer) C() <-chan time.Time { return t.c }

// Reset arms the timer to fire once after d (at once if d <= 0).
func (t *fdTimer) Reset(d time.Duration) {
	select {
	case <-t.c:
	default:
	}
	if d <= 0 {
		d = 1 // a zero value would disarm the timer
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(t.fd, 0, &spec, nil); err != nil {
		// The fd is gone; fall back to firing at once rather than never.
		select {
		case t.c <- time.Now():
		default:
		}
	}
}

// Stop disarms the timer and releases its fd; the timer cannot be reused.
func (t *fdTimer) Stop() {
	t.once.Do(func() { _ = t.f.Close() })
}
