// Package serve runs an emulated NAS: what 'nasemu iscsi', 'nasemu nas'
// and 'nasemu mount' serve, beside the fronts themselves (fusefs, iscsi,
// smb), so that the command only parses flags and calls it.
//
//   - NASArray is the model of a NAS that serves a share and a LUN from
//     one array: the setup's front and an iSCSI front side by side over the
//     same link and NAS device, the LUN a region at the end of the array.
//     NewLUNVolume makes that LUN a volume of its own for the SCSI layer.
//   - LUN is an iSCSI target on a listener that can lose power: its
//     sessions are dropped, its unsynced writes undone (NewLUNStore), and
//     initiators log in again to what survived.
//   - CompClock and SMBCompensator make a share behind smbd answer early by
//     the host's SMB round trip, measured while it serves.
//   - Control carries out the control socket's requests (status, fail N,
//     replace N, power-loss, fault RULE|list|clear) for a share, a LUN or
//     both, over the one array they share; with a state directory (or a
//     share) failed and rebuilding drives outlive a restart.
package serve
