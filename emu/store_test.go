package emu_test

import (
	"path/filepath"
	"testing"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/emu/storetest"
	"github.com/nasemu/nasemu/models/fixed"
)

func TestMemStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, size int64) emu.Store { return emu.NewMemStore(size) })
}

func TestFileStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, size int64) emu.Store {
		s, err := emu.OpenFileStore(filepath.Join(t.TempDir(), "backing"), size)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestVolatileStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, size int64) emu.Store {
		return emu.NewVolatileStore(emu.NewMemStore(size))
	})
}

// A Volume over a free model is a Store too, and passes the same suite.
func TestVolumeConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, size int64) emu.Store {
		m, err := fixed.New(fixed.Config{Capacity: size})
		if err != nil {
			t.Fatal(err)
		}
		v, err := emu.NewVolume(m, emu.NewMemStore(size), emu.Options{Clock: &emu.VirtualClock{}})
		if err != nil {
			t.Fatal(err)
		}
		return v
	})
}
