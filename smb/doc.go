// Package smb is the smb:// target of nasemu bench and a harness that runs
// a private Samba server.
//
// The target (Open, Factory) speaks SMB 2.0.2 to 3.1.1 with NTLM through
// github.com/hirochachacha/go-smb2 to any server: a NAS, Samba, Windows.
// Every suite runs against it, file-by-file ones (copy) included: a copied
// file is created, written and closed over the wire. The password comes
// from the address (throwaway test setups only), from NASEMU_SMB_PASSWORD,
// or from a prompt when stdin is a terminal, and never appears in a name,
// a report or an error.
//
// Errors: a malformed address, a wrong user or password, an unknown share
// or a missing directory wrap bench.ErrTarget (bad input: exit status 2);
// a server that cannot be reached, stops answering (Config.IOTimeout) or
// drops the connection is a failure while running (exit status 1).
//
// The harness (StartSamba) writes an smb.conf whose whole state (passdb,
// locks, pid, cache, logs) lives in one private directory, which it creates
// afresh and writes without following symlinks (package rundir), binds smbd
// to a loopback address only, and stops it with everything it forked. It serves
// the tests and the emulated NAS (nasemu nas).
package smb
