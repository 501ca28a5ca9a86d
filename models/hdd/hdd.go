// Package hdd is a placeholder: the model is being written.
package hdd

import (
	"errors"
	"time"

	"github.com/nasemu/nasemu/models"
)

// Config describes a drive.
type Config struct {
	Capacity models.Bytes `yaml:"capacity"`
}

// Validate checks the configuration.
func (c Config) Validate() error { return nil }

// ScaleTo returns the configuration scaled down to the given user capacity.
func (c Config) ScaleTo(capacity int64) (Config, error) {
	c.Capacity = models.Bytes(capacity)
	return c, nil
}

// Summary returns the drive's key figures for listings.
func (c Config) Summary() string { return "" }

// Drive is the model.
type Drive struct{ cfg Config }

// New returns a drive model.
func New(cfg Config, seed uint64) (*Drive, error) { return nil, errors.New("not yet") }

// Capacity implements models.Device.
func (d *Drive) Capacity() int64 { return int64(d.cfg.Capacity) }

// Submit implements models.Device.
func (d *Drive) Submit(at time.Duration, r models.Request) (time.Duration, error) { return at, nil }
