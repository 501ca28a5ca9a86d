//go:build !linux

package emu

import "errors"

// alarm is a kernel timer where there is one (alarm_linux.go); elsewhere
// there is none and the clock waits on Go's timers.
type alarm struct{}

func newAlarm() (*alarm, error) { return nil, errors.New("no timerfd") }

func (a *alarm) wait(due int64) {}

func (a *alarm) watch(wake int64) {}
func (a *alarm) unwatch()         {}
