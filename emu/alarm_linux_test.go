package emu

import (
	"testing"
	"time"
)

// TestWatchdogWakesLateAlarm: a goroutine waiting on an alarm that the
// runtime does not wake (its timer disarmed, its read deadline an hour
// away, as when no thread waits in epoll) is woken by the watchdog at
// its wake-up time plus watchGrace, not before.
func TestWatchdogWakesLateAlarm(t *testing.T) {
	a, err := newAlarm()
	if err != nil {
		t.Fatal(err)
	}
	defer a.f.Close()
	a.f.SetReadDeadline(time.Now().Add(time.Hour))
	start := time.Now()
	const after = 2 * time.Millisecond
	a.watch(sinceBase(start) + int64(after))
	done := make(chan time.Duration, 1)
	go func() {
		var b [8]byte
		a.f.Read(b[:])
		done <- time.Since(start)
	}()
	select {
	case d := <-done:
		if d < after+watchGrace {
			t.Errorf("woken after %v, before its kick at %v", d, after+watchGrace)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watchdog did not wake the alarm")
	}
	a.unwatch() // the watchdog has taken it off already
	dog.mu.Lock()
	defer dog.mu.Unlock()
	if len(dog.watched) != 0 || dog.armed != 0 {
		t.Errorf("after the kick: %d alarms watched, timer armed for %d", len(dog.watched), dog.armed)
	}
}

// TestWatchdogLeavesWokenAlarms: an alarm taken off the watchdog's list
// before its kick is not woken, and the watchdog's timer follows the
// earliest kick left.
func TestWatchdogLeavesWokenAlarms(t *testing.T) {
	var as [3]*alarm
	for i := range as {
		a, err := newAlarm()
		if err != nil {
			t.Fatal(err)
		}
		defer a.f.Close()
		as[i] = a
	}
	now := sinceBase(time.Now())
	for i, a := range as {
		a.watch(now + int64(i+1)*int64(time.Hour))
	}
	armed := func() int64 {
		dog.mu.Lock()
		defer dog.mu.Unlock()
		return dog.armed
	}
	if got, want := armed(), now+int64(time.Hour+watchGrace); got != want {
		t.Errorf("armed for %d, want %d", got, want)
	}
	as[0].unwatch()
	if got, want := armed(), now+int64(2*time.Hour+watchGrace); got != want {
		t.Errorf("after the first left: armed for %d, want %d", got, want)
	}
	as[2].unwatch()
	as[1].unwatch()
	if got := armed(); got != 0 {
		t.Errorf("with none left: armed for %d, want 0 (disarmed)", got)
	}
	// A watched alarm taken off before its kick waits for its own deadline.
	a := as[0]
	start := time.Now()
	a.watch(sinceBase(start) + int64(time.Millisecond))
	a.unwatch()
	a.f.SetReadDeadline(start.Add(30 * time.Millisecond))
	var b [8]byte
	a.f.Read(b[:])
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Errorf("woken after %v: the watchdog kicked an alarm it no longer watched", d)
	}
}
