package bench

import "time"

// Host CPU time of I/O that reaches no device. A simulated drive's
// latencies are measured at the host, so they hold the kernel's path of a
// read or write; an operation that never reaches the device (fio's null
// engine, a read of /dev/zero or write to /dev/null, a fallocate of
// blocks the file system merely records) costs only the host's time, and
// a job instance, one thread, does one at a time.
//
// Class-level figures of a Linux x86-64 host running fio 3.33, CPU time
// per I/O (fio's usr_cpu+sys_cpu × job_runtime / total_ios: the CPU the
// job used, which other tenants' load does not inflate as it does wall
// time), the least of three 2-second runs on a 2-core AMD EPYC VM
// (Linux 6.18, ext4):
//
//	fio --name=x --ioengine=null --rw=randread --bs=4k --size=1g --norandommap --time_based --runtime=2         0.145 0.176 0.243 µs
//	fio --name=x --ioengine=psync --filename=/dev/null --rw=write --bs=128k --size=128m --time_based --runtime=2 2.185 2.697 2.741 µs
//	fio --name=x --ioengine=psync --filename=/dev/zero --rw=randread --bs=4k --size=128m --time_based --runtime=2 1.875 2.332 2.542 µs
//	fio --name=x --ioengine=falloc --filename=fa --rw=randwrite --bs=64k --size=100m --time_based --runtime=2    3.459 4.142 4.625 µs
const (
	nullEngineTime = 145 * time.Nanosecond  // fio's own work per I/O, no system call (also an emulated zone's reset)
	noDeviceIOTime = 2030 * time.Nanosecond // a pread/pwrite of /dev/zero or /dev/null: the mean of the two least
	fallocateTime  = 3459 * time.Nanosecond // fallocate(2) of a 64 KiB range on ext4
)

// maxTimelessIOs is how many I/Os in a row a time-based job on a
// simulated target may complete without simulated time passing before
// the run stops: such a job would never reach its runtime.
const maxTimelessIOs = 1 << 20

// hostCall returns when an operation of the stream that takes d of the
// host's CPU and was issued at at completes: after the stream's previous
// one (one thread per job instance).
func (st *stream) hostCall(at, d time.Duration) time.Duration {
	st.cpuFree = max(at, st.cpuFree) + d
	return st.cpuFree
}
