// Package validate reproduces published measurements with the models: each
// reference case names a measured figure, the built-in setup of the system
// it was measured on and the workload (a bench suite's job, a fio job file's
// job, or several clients copying at once) that reproduces how it was
// measured. Run builds a fresh device per run, runs the workload in virtual
// time and compares the predicted figure with the measured one; Summarize
// gives the median absolute error and the share of cases within 25 %.
//
// Cases that cannot be modelled (a ratio quoted without its two figures, a
// result of a system that is not described) stay in the data with the
// reason, and are reported as such rather than dropped.
package validate
