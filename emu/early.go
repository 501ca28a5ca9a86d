package emu

import (
	"slices"
	"time"
)

// EarlyTable is how early a front answers (wall time) as a function of
// how long its client waits (wall time): points sorted by wait,
// interpolated linearly between them and held constant beyond them.
//
// A request spends time outside the model: the kernel and the servers in
// front of the model pass it on, and the answer back to the client, whose
// thread has to be woken. That time grows with the wait: a thread that has
// waited a few microseconds is woken on a processor that is still
// running; one that has waited milliseconds sleeps on a processor that
// has gone idle (on a virtual machine, one whose virtual CPU the host has
// descheduled), and waking it takes up to a few hundred microseconds
// more. So the fronts measure the round trip at several waits and answer
// each request early by the table's figure at its own.
type EarlyTable struct {
	Wait, Early []time.Duration
}

// FlatEarly answers every request d early.
func FlatEarly(d time.Duration) *EarlyTable {
	return &EarlyTable{Wait: []time.Duration{0}, Early: []time.Duration{d}}
}

// At returns the figure for a wait (0 for a nil or empty table).
func (c *EarlyTable) At(wait time.Duration) time.Duration {
	if c == nil || len(c.Wait) == 0 {
		return 0
	}
	i, _ := slices.BinarySearch(c.Wait, wait)
	switch {
	case i == 0:
		return c.Early[0]
	case i == len(c.Wait):
		return c.Early[i-1]
	}
	w0, w1, e0, e1 := c.Wait[i-1], c.Wait[i], c.Early[i-1], c.Early[i]
	return e0 + time.Duration(float64(e1-e0)*float64(wait-w0)/float64(w1-w0))
}

// MiddleMean returns the mean of the middle half of samples (sorting
// them): the estimate of a round trip from samples that are bimodal
// (whether a serving thread was still awake) and have a tail (a few
// preempted by other work), which a median or a mean would follow.
func MiddleMean(samples []time.Duration) time.Duration {
	slices.Sort(samples)
	trim := len(samples) / 4
	mid := samples[trim : len(samples)-trim]
	var sum time.Duration
	for _, d := range mid {
		sum += d
	}
	return sum / time.Duration(len(mid))
}
