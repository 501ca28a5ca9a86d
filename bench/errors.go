package bench

import "errors"

// Sentinel errors of the benchmark engine, wrapped with context. ErrJob and
// ErrTarget mark bad input (the CLI exits with status 2); any other error
// from Run is a failure while running (status 1).
var (
	// ErrJob: a job description is malformed or asks for something nasemu
	// does not support; the message names the file, line and option.
	ErrJob = errors.New("bad job")
	// ErrTarget: a target cannot be used for the jobs: unknown scheme,
	// missing path, read-only for a write job, too small.
	ErrTarget = errors.New("bad target")
)
