//go:build race

package iscsi

// raceDetector: the race detector slows every goroutine several times,
// so wall-clock agreement with a model cannot be measured.
const raceDetector = true
