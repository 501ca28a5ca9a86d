package fusefs

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/emu/storetest"
	"github.com/nasemu/nasemu/models"
)

// TestStoreConformanceOverMount runs emu/storetest over a kernel FUSE
// mount of the share: each store is an emu.FileStore whose file is on the
// mount, so every call goes through the kernel to the share's file
// operations (ftruncate to size, pread, pwrite, fsync, fallocate's hole
// punching for Trim, and the flock FileStore takes) and the share's bytes
// are the backing file's. Behind the SMB front every open for writing is
// direct I/O, so each read and write is a request of its own, as smbd's
// are; on a direct mount the client's page cache sits between, and writes
// reach the share as write-back and at fsync.
//
// One check holds by the adapter alone: OutOfRange. A file has no end
// that a write cannot pass (it grows), so FileStore refuses accesses past
// its size before they reach the mount.
func TestStoreConformanceOverMount(t *testing.T) {
	for _, front := range []struct {
		name  string
		front Front
	}{{"direct", FrontDirect}, {"smb", FrontSMB}} {
		t.Run("front="+front.name, func(t *testing.T) {
			s := mountShare(t, freeModel(t, 1<<30), nil, "", Options{Front: front.front})
			stores := 0
			storetest.Run(t, func(t *testing.T, size int64) emu.Store {
				stores++
				st, err := emu.OpenFileStore(s.path(fmt.Sprintf("store-%d", stores)), size)
				if err != nil {
					t.Fatal(err)
				}
				return st
			})
			// The stores are closed: what the mount shows of each is
			// in its backing file, and the model was charged for it.
			for i := 1; i <= stores; i++ {
				name := fmt.Sprintf("store-%d", i)
				if got, want := mustRead(t, s.path(name)), mustRead(t, filepath.Join(s.backing, name)); !bytes.Equal(got, want) {
					t.Errorf("%s: the mount shows other bytes than its backing file holds", name)
				}
			}
			for _, op := range []models.Op{models.Read, models.Write} {
				if volumeCount(s.fs, op) == 0 {
					t.Errorf("no %v reached the share's model", op)
				}
			}
		})
	}
}
