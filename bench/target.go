package bench

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/nasemu/nasemu/models"
)

// Mode says which clock a target's results are measured in.
type Mode string

// Modes of a run, as the JSON contract spells them.
const (
	Virtual Mode = "virtual" // simulated time of a model
	Real    Mode = "real"    // wall-clock time of real (or emulated) storage
)

// Target is where a run's I/O goes. The runner lays out and opens files
// through it and times every operation on its Clock. Names are relative,
// '/'-separated paths inside the target.
type Target interface {
	// Name is the target as the user wrote it.
	Name() string
	// Mode says whether times are virtual or real.
	Mode() Mode
	// Clock is the clock that times the target's operations.
	Clock() Clock
	// Layout makes sure the named file exists with size bytes before a
	// job runs, untimed (fio's layout phase). With fill, bytes that do not
	// exist yet are written, so reads find data. size 0 asks for the whole
	// target where it is a single device or file; Layout returns the size
	// that the file has for the job.
	Layout(name string, size int64, fill bool) (int64, error)
	// Open opens (or with Create, creates) a laid-out file at time at and
	// returns it with the time the open completed.
	Open(at time.Duration, name string, size int64, flags OpenFlags) (File, time.Duration, error)
	// Remove deletes a file at time at.
	Remove(at time.Duration, name string) (time.Duration, error)
	// Close releases the target.
	Close() error
}

// OpenFlags say how a file is opened.
type OpenFlags struct {
	Write  bool // open for writing too
	Create bool // create (truncate) the file as a file manager does
	Direct bool // bypass the page cache (real targets)
	// WriteThrough: writes are on the storage before they complete
	// (O_SYNC).
	WriteThrough bool
	// Thread is the job instance that opens the file (its index in the
	// group): a virtual target tags its requests with it
	// (models.Request.Thread).
	Thread int
}

// File is a file opened on a target. Its methods are called by one
// goroutine at a time per buffer, and by several at once on real targets
// with iodepth > 1.
type File interface {
	// Do performs a Read, Write or Flush of n bytes at off (relative to
	// the file) issued at time at, and returns its completion time. buf
	// holds n bytes on real targets and is nil on virtual ones.
	Do(at time.Duration, op models.Op, off, n int64, buf []byte) (time.Duration, error)
	// Close closes the file at time at.
	Close(at time.Duration) (time.Duration, error)
}

// DeviceCounters are the model's counters summed over a simulated stack.
type DeviceCounters struct {
	HostBytesWritten   float64 `json:"host_bytes_written"`
	NANDBytesWritten   float64 `json:"nand_bytes_written"`
	WriteAmplification float64 `json:"write_amplification"`
	// Source is "model" when the counters come from a model, "none" when
	// the target has none (real storage); extra to the contract.
	Source string `json:"source"`
}

// CounterSource is implemented by targets backed by a model, whose
// counters go into the report.
type CounterSource interface {
	DeviceCounters() DeviceCounters
}

// Describer is implemented by targets that can say what they are (a
// setup's description), for reports.
type Describer interface {
	Description() string
}

// ValidDataLayouter is implemented by targets on which a tool can create a
// file by setting its valid data length instead of writing it, as diskspd
// does with SetFileValidData on a local NTFS volume (an iSCSI LUN's
// included; an SMB share cannot, and diskspd then writes the file).
// LayoutValid lays the named file out that way and reports true, or
// reports false when the target's filesystem cannot (the caller then
// lays it out with Layout).
type ValidDataLayouter interface {
	LayoutValid(name string, size int64) (int64, bool, error)
}

// OpenOptions are passed to every factory.
type OpenOptions struct {
	Seed uint64 // seeds models of simulated targets
}

// Factory opens targets of one scheme.
type Factory struct {
	// Scheme is the part before ':' ("sim", "smb", "iscsi"); bare paths
	// belong to the scheme "file".
	Scheme string
	// Usage shows the address form in messages, e.g. "sim:SETUP".
	Usage string
	// Open opens the target; rest is the address after "scheme:" (for
	// "file", the path), addr the whole address.
	Open func(addr, rest string, opts OpenOptions) (Target, error)
}

// Registry maps a target address's scheme to the factory that opens it.
// It is built explicitly by the program (no init-time registration), so
// smb:// and iscsi:// plug in by one Register call each.
type Registry struct {
	factories map[string]Factory
}

// NewRegistry returns a registry holding the given factories.
func NewRegistry(factories ...Factory) *Registry {
	r := &Registry{factories: map[string]Factory{}}
	for _, f := range factories {
		r.Register(f)
	}
	return r
}

// Register adds a factory; it panics when the scheme is already taken,
// because that is a programming error.
func (r *Registry) Register(f Factory) {
	if f.Scheme == "" || f.Open == nil {
		panic("bench: Register of an incomplete factory")
	}
	if _, dup := r.factories[f.Scheme]; dup {
		panic("bench: duplicate registration of target scheme " + f.Scheme)
	}
	r.factories[f.Scheme] = f
}

// Schemes returns the usage forms of the registered schemes, sorted.
func (r *Registry) Schemes() []string {
	var out []string
	for _, f := range r.factories {
		out = append(out, f.Usage)
	}
	sort.Strings(out)
	return out
}

var schemeRE = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*):`)

// Open resolves addr: "scheme:rest" goes to the scheme's factory, anything
// else (a path) to the "file" scheme.
func (r *Registry) Open(addr string, opts OpenOptions) (Target, error) {
	if addr == "" {
		return nil, fmt.Errorf("%w: empty target", ErrTarget)
	}
	scheme, rest := "file", addr
	if m := schemeRE.FindStringSubmatch(addr); m != nil && !strings.HasPrefix(addr, "/") {
		scheme, rest = strings.ToLower(m[1]), addr[len(m[0]):]
		if scheme == "file" {
			rest = strings.TrimPrefix(rest, "//")
		}
	}
	f, ok := r.factories[scheme]
	if !ok {
		return nil, fmt.Errorf("%w: unknown target scheme %q in %q (known: %s)", ErrTarget, scheme, addr, strings.Join(r.Schemes(), ", "))
	}
	return f.Open(addr, rest, opts)
}
