package fusefs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/nasemu/nasemu/emu"
)

// plainNode is the reference for the overhead benchmark: go-fuse's
// loopback with FUSE passthrough disabled (its files do not offer their
// descriptor), mounted with the share's options.
type plainNode struct{ *fs.LoopbackNode }

func (n *plainNode) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &plainNode{ops.(*fs.LoopbackNode)}
}

func (n *plainNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fh, _, errno := n.LoopbackNode.Open(ctx, backingFlags(flags))
	if errno != 0 {
		return nil, 0, errno
	}
	return plainFile{fh.(*fs.LoopbackFile)}, openFlags(flags), 0
}

func (n *plainNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	in, fh, _, errno := n.LoopbackNode.Create(ctx, name, backingFlags(flags), mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	return in, plainFile{fh.(*fs.LoopbackFile)}, openFlags(flags), 0
}

// plainFile hides LoopbackFile's PassthroughFd; reads and writes go through
// go-fuse as in the share.
type plainFile struct{ lf *fs.LoopbackFile }

func (f plainFile) Read(ctx context.Context, buf []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if spliceFits(len(buf)) { // spliced, as the share's reads (see splice.go)
		return f.lf.Read(ctx, buf, off)
	}
	fd, _ := f.lf.PassthroughFd()
	n, err := syscall.Pread(fd, buf, off)
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	return fuse.ReadResultVector([][]byte{buf[:n]}), 0
}

func (f plainFile) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	return f.lf.Write(ctx, data, off)
}
func (f plainFile) Release(ctx context.Context) syscall.Errno { return f.lf.Release(ctx) }
func (f plainFile) Flush(ctx context.Context) syscall.Errno   { return f.lf.Flush(ctx) }
func (f plainFile) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	return f.lf.Fsync(ctx, flags)
}
func (f plainFile) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return f.lf.Getattr(ctx, out)
}
func (f plainFile) Setattr(ctx context.Context, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return f.lf.Setattr(ctx, in, out)
}

// mountPlain mounts the reference loopback and returns its mountpoint.
func mountPlain(b *testing.B) string {
	requireFuse(b)
	backing, mnt := b.TempDir(), usedMountpoint(b.TempDir())
	lr, err := fs.NewLoopbackRoot(backing)
	if err != nil {
		b.Fatal(err)
	}
	server, err := fs.Mount(mnt, &plainNode{lr.(*fs.LoopbackNode)}, MountOptions("plain", false))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := server.Unmount(); err != nil {
			b.Error(err)
		}
	})
	return mnt
}

// BenchmarkOverhead compares the throughput of nasemu's share over a
// zero-cost model with that of the reference loopback, with the same mount
// options and O_DIRECT I/O (so that every request crosses FUSE):
// scripts/fuse-overhead.sh runs it and prints the ratio.
func BenchmarkOverhead(b *testing.B) {
	for _, w := range []struct {
		name  string
		bs    int
		write bool
		rand  bool
	}{
		{"seqwrite-1m", 1 << 20, true, false},
		{"seqread-1m", 1 << 20, false, false},
		{"randread-4k", 4 << 10, false, true},
		{"randwrite-4k", 4 << 10, true, true},
	} {
		for _, target := range []string{"nasemu", "loopback"} {
			b.Run(fmt.Sprintf("op=%s/fs=%s", w.name, target), func(b *testing.B) {
				var mnt string
				if target == "nasemu" {
					mnt = mountShare(b, freeModel(b, 1<<34), &emu.VirtualClock{}, "", Options{}).mnt
				} else {
					mnt = mountPlain(b)
				}
				const size = 64 << 20
				path := mnt + "/bench"
				if err := os.WriteFile(path, randBytes(1, size), 0o644); err != nil {
					b.Fatal(err)
				}
				fh, err := os.OpenFile(path, os.O_RDWR|syscall.O_DIRECT, 0)
				if err != nil {
					b.Fatal(err)
				}
				defer fh.Close()
				buf := randBytes(2, w.bs)
				rng := rand.New(rand.NewPCG(3, 4))
				blocks := int64(size / w.bs)
				b.SetBytes(int64(w.bs))
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					off := int64(i) % blocks * int64(w.bs)
					if w.rand {
						off = rng.Int64N(blocks) * int64(w.bs)
					}
					if w.write {
						_, err = fh.WriteAt(buf, off)
					} else {
						_, err = fh.ReadAt(buf, off)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
