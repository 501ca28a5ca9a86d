package fusefs

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/models"
)

// recordingModel records the requests a share submits.
type recordingModel struct {
	models.Device
	mu  sync.Mutex
	log []models.Request
}

func (m *recordingModel) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	m.mu.Lock()
	m.log = append(m.log, r)
	m.mu.Unlock()
	return m.Device.Submit(at, r)
}

// last returns the last recorded request of op.
func (m *recordingModel) last(op models.Op) (models.Request, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.log) - 1; i >= 0; i-- {
		if m.log[i].Op == op {
			return m.log[i], true
		}
	}
	return models.Request{}, false
}

// File operations name their file as the sim: target does — by the volume
// address of its first byte and its size — so that layers keyed on it (an
// SMB client's read-ahead within the open file) see the same file.
func TestFileOpsNameTheFile(t *testing.T) {
	const size = 1 << 20
	m := &recordingModel{Device: freeModel(t, 1<<30)}
	s := mountShare(t, m, &emu.VirtualClock{}, "", Options{})
	// A file created first on an empty volume starts at address 0; make
	// another one first so that the address is not trivially 0.
	if err := os.WriteFile(s.path("first"), make([]byte, 3*BlockSize), 0o644); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Create(s.path("data"))
	if err != nil {
		t.Fatal(err)
	}
	create, _ := m.last(models.Create)
	if _, err := fh.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	write, _ := m.last(models.Write)
	fh.Close()
	start := write.Offset + write.Length - size // the file is contiguous
	if create.Offset != start || create.End() != s.fs.Volume().Capacity() {
		t.Errorf("create named [%d, +%d), want the file's first block %d and the rest of the volume", create.Offset, create.Length, start)
	}
	// The kernel sends RELEASE after close(2) has returned.
	deadline := time.Now().Add(2 * time.Second)
	cl, _ := m.last(models.Close)
	for cl.Length != size && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		cl, _ = m.last(models.Close)
	}
	if cl.Offset != start || cl.Length != size {
		t.Errorf("close named [%d, +%d), want [%d, +%d)", cl.Offset, cl.Length, start, size)
	}
	fh, err = os.Open(s.path("data"))
	if err != nil {
		t.Fatal(err)
	}
	fh.Close()
	if open, _ := m.last(models.Open); open.Offset != start || open.Length != size {
		t.Errorf("open named [%d, +%d), want [%d, +%d)", open.Offset, open.Length, start, size)
	}
	if err := os.Remove(s.path("data")); err != nil {
		t.Fatal(err)
	}
	if rm, _ := m.last(models.Remove); rm.Offset != start || rm.Length != size {
		t.Errorf("remove named [%d, +%d), want [%d, +%d)", rm.Offset, rm.Length, start, size)
	}
}
