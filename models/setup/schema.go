package setup

import (
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/cache"
	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/link"
	"github.com/nasemu/nasemu/models/nas"
	"github.com/nasemu/nasemu/models/proto"
	"github.com/nasemu/nasemu/models/raid"
)

// Setup is a parsed, validated setup file: one whole system from the drives
// up to the protocol its clients speak. Parse and Load fill every default,
// so the fields read as the system that will be built. A Setup built by
// hand (not parsed) should pass Validate before Build.
type Setup struct {
	// Name identifies the setup (sim:NAME, reports). It defaults to the
	// file's base name without .yaml.
	Name string
	// Description is one line for listings.
	Description string
	// Notes say where the setup's figures come from and why each choice a
	// test bed left open was made.
	Notes string

	// NAS is the system the drives sit in (controller CPU, RAM, buses), or
	// nil: the array is attached straight to the host and accessed locally
	// with no controller model.
	NAS *System
	// Drives are the array's members, in bay order, as groups of identical
	// drives (more than one group only to mix sizes, e.g. for shr).
	Drives []DriveGroup
	// RAID lays the members out.
	RAID raid.Config
	// Cache is the optional SSD cache tier in front of the array.
	Cache *Cache
	// Link connects the NAS to its clients.
	Link link.Config
	// Protocol is how clients reach the storage.
	Protocol proto.Config
	// Encryption makes the share an encrypted shared folder: the NAS CPU
	// encrypts and decrypts every byte.
	Encryption bool
	// Clients is how many client machines drive the system at once, each
	// with a flow of its own (LACP hashes flows, not requests, onto links).
	Clients int

	file string // where the setup came from, for messages
}

// System is the NAS or server model of a setup: a catalog system, possibly
// overridden inline, or one written wholly inline.
type System struct {
	// Ref is the catalog name the system came from ("" when wholly inline).
	Ref string
	// Inline is true when the setup file wrote the system as a map.
	Inline bool
	// Name names the system in reports: the catalog name, or the inline
	// map's name: key.
	Name string
	// Product is the vendor and model, for listings.
	Product string
	// Config is the controller's parameters, with any inline overrides.
	// Its Local and Encrypted fields are not the file's to set: Build sets
	// them from protocol: and encryption:.
	Config nas.Config
	// Bays and NICs are what the catalog says the box offers (0 and nil:
	// not stated, not checked); an inline system states neither.
	Bays int
	NICs []catalog.NIC
	// OS is the catalog's operating system of the box ("" when inline):
	// its rules for the cache tier apply (catalog.System.OS).
	OS string
}

// DriveGroup is Count identical drives.
type DriveGroup struct {
	// Ref is the catalog name of the model ("" when wholly inline).
	Ref string
	// Inline is true when the setup file wrote the model as a map.
	Inline bool
	// Drive is the resolved model with any inline overrides applied.
	Drive catalog.Drive
	// Count is how many of them (at least 1).
	Count int
	// Capacity, when non-zero, scales each drive down to this user
	// capacity with the same geometry per die or zone, for fast tests.
	Capacity models.Bytes
	// Overprovision is extra spare area reserved on each SSD, as a
	// fraction of its user capacity (0.07 for "7%").
	Overprovision float64
}

// Cache is an SSD cache tier in front of the array.
type Cache struct {
	// Drives are the cache SSDs.
	Drives []DriveGroup
	// Config holds the cache's parameters (mode and tuning).
	Config cache.Config
}

// raidLevels are the levels a setup can name, in the order messages list
// them.
var raidLevels = func() []string {
	var names []string
	for l := raid.Single; l <= raid.SHR; l++ {
		names = append(names, l.String())
	}
	return names
}()

// Protocol kinds a setup can name.
var protocolKinds = []string{proto.Local, proto.SMB2, proto.SMB3, proto.ISCSI}

// linkKinds returns the link kinds a setup can name.
func linkKinds() []string {
	var names []string
	for _, k := range link.Kinds() {
		names = append(names, k.Name)
	}
	return names
}

// Link modes: how several links of one kind share the traffic.
var linkModes = []string{link.Single, link.SMBMultichannel, link.LACP}

// Cache modes.
var cacheModes = []string{cache.ReadOnly, cache.ReadWrite}
