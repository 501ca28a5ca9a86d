//go:build !race

package iscsi

const raceDetector = false
