package serve

import (
	"fmt"
	"log/slog"
	"net"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/fusefs"
	"github.com/nasemu/nasemu/models"
)

// Control carries out the control socket's requests (fusefs.ControlRequest:
// status, fail N, replace N, power-loss) for an emulated NAS: a share, a
// LUN, or both over one array. With a share, the share carries out status,
// fail and replace (it saves the arrays' state with its files); without
// one, the volume that holds the model does. A power loss takes both.
type Control struct {
	// FS is the share, nil when none is served.
	FS *fusefs.FS
	// LUN is the iSCSI target, nil when none is served.
	LUN *LUN
	// LUNBacking names where the LUN's bytes are (for status).
	LUNBacking string
	// LUNSize is the LUN's size in bytes (for status).
	LUNSize int64
	// Volume serialises the model; without FS, fail and replace act on
	// its arrays.
	Volume *emu.Volume
	// LUNVolume is the LUN's own volume (Volume itself for 'nasemu
	// iscsi'), where "fault" injects into the LUN's requests; nil when no
	// LUN is served.
	LUNVolume *emu.Volume
	// Replacement builds the new drive "replace N" puts in the place of
	// array member N; nil makes replacing an error (without FS).
	Replacement func(member int) (models.Device, error)
	// Logger receives the faults carried out; nil is quiet.
	Logger *slog.Logger
	// StateDir, when set (without FS), is where fail and replace save the
	// arrays' health (emu.Volume.SaveArrays), so that a restart comes
	// back degraded or rebuilding as it was; a share saves its own.
	StateDir string
}

// Response is the control socket's answer: a share's, with the LUN's
// state beside it.
type Response struct {
	fusefs.ControlResponse
	LUN *LUNStatus `json:"lun,omitempty"`
}

// LUNStatus is a snapshot of a served LUN.
type LUNStatus struct {
	Addr     string `json:"addr"`
	IQN      string `json:"iqn"`
	Backing  string `json:"backing"`
	Capacity int64  `json:"capacity_bytes"`
	Sessions int    `json:"sessions"`
	// DroppedSessions is set for "power-loss": the sessions it dropped.
	DroppedSessions int     `json:"dropped_sessions,omitempty"`
	ModelTime       float64 `json:"model_time_s"`
	// Arrays are the model's arrays when no share reports them.
	Arrays []emu.ArrayStatus `json:"arrays,omitempty"`
}

// Serve answers requests on l (a listener of fusefs.ListenControl) until
// l is closed, to root and the emulator's own user only.
func (c *Control) Serve(l net.Listener) error {
	return fusefs.ServeRequests(l, c.logger(), func(req fusefs.ControlRequest) any { return c.Handle(req) })
}

func (c *Control) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// Handle carries out one request.
func (c *Control) Handle(req fusefs.ControlRequest) Response {
	if req.Cmd == "fault" {
		return c.fault(req)
	}
	var resp Response
	dropped, lunLost := 0, int64(0)
	if c.FS != nil {
		if req.Cmd == "power-loss" && c.LUN != nil {
			// Both lose power at once: the LUN's sessions first, so that
			// none of its writes lands after the share's loss.
			dropped, lunLost = c.LUN.PowerLoss()
		}
		resp.ControlResponse = c.FS.Control(req)
		resp.LostBytes += lunLost
	} else if err := c.handleVolume(req, &resp, &dropped); err != nil {
		resp.Error = err.Error()
		return resp
	}
	if !resp.OK {
		return resp
	}
	if c.LUN != nil {
		st := c.lunStatus()
		st.DroppedSessions = dropped
		resp.LUN = &st
	}
	return resp
}

// handleVolume carries out req without a share.
func (c *Control) handleVolume(req fusefs.ControlRequest, resp *Response, dropped *int) error {
	log := c.logger()
	switch req.Cmd {
	case "status":
	case "fail":
		if err := c.Volume.FailMember(req.Member); err != nil {
			return err
		}
		log.Warn("drive failed by control request", "member", req.Member)
	case "replace":
		if c.Replacement == nil {
			return fusefs.ErrNoReplacement
		}
		dev, err := c.Replacement(req.Member)
		if err != nil {
			return fmt.Errorf("building a replacement for member %d: %w", req.Member, err)
		}
		if err := c.Volume.ReplaceMember(req.Member, dev); err != nil {
			return err
		}
		log.Warn("drive replaced by control request: rebuilding", "member", req.Member)
	case "power-loss":
		if c.LUN != nil {
			*dropped, resp.LostBytes = c.LUN.PowerLoss()
		}
		log.Warn("iSCSI sessions dropped by the power loss", "sessions", *dropped)
	default:
		return fmt.Errorf("unknown command %q (known: status, fail, replace, power-loss, fault)", req.Cmd)
	}
	if (req.Cmd == "fail" || req.Cmd == "replace") && c.StateDir != "" {
		if err := c.Volume.SaveArrays(c.StateDir); err != nil {
			return fmt.Errorf("%s %d done, but not saved: %w", req.Cmd, req.Member, err)
		}
	}
	resp.OK = true
	return nil
}

// lunStatus returns the LUN's state (and the arrays' without a share).
func (c *Control) lunStatus() LUNStatus {
	st := LUNStatus{Addr: c.LUN.Addr(), IQN: c.LUN.IQN(), Backing: c.LUNBacking, Capacity: c.LUNSize, Sessions: c.LUN.Sessions()}
	if c.Volume != nil {
		st.ModelTime = c.Volume.Clock().Now().Seconds()
		if c.FS == nil {
			st.Arrays = c.Volume.Arrays()
		}
	}
	return st
}

// fault carries out "fault" (list, clear, or a rule to inject) on every
// front's volume: the share's (by the share) and the LUN's. A rule's
// range is in each volume's own bytes.
func (c *Control) fault(req fusefs.ControlRequest) Response {
	var resp Response
	if c.FS == nil && c.LUNVolume == nil {
		resp.Error = "this emulator serves no volume to inject faults into"
		return resp
	}
	if c.FS != nil {
		if resp.ControlResponse = c.FS.Control(req); !resp.OK {
			return resp
		}
	}
	if c.LUNVolume != nil {
		rules, err := c.LUNVolume.FaultRequest(req.Fault)
		if err != nil {
			return Response{ControlResponse: fusefs.ControlResponse{Error: err.Error()}}
		}
		resp.Faults = append(resp.Faults, fusefs.LabelFaults("lun", rules)...)
		if c.FS == nil && req.Fault != "" && req.Fault != "list" {
			c.logger().Warn("fault request carried out on the LUN", "fault", req.Fault)
		}
	}
	resp.OK = true
	if c.LUN != nil {
		st := c.lunStatus()
		resp.LUN = &st
	}
	return resp
}
