package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nasemu/nasemu/fusefs"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fault"
	"github.com/nasemu/nasemu/serve"
)

// ctlHelp says what the commands do ('nasemu ctl --help').
const ctlHelp = `
Commands:
  status          the share's and the LUN's state, the arrays' health
  fail N          fail array member N (from 0); replace N puts a new drive there and rebuilds
  power-loss      the NAS loses power: unsynced writes undone, iSCSI sessions dropped
  fault RULE      inject a fault into every front's requests from now on (at most 64 rules):
                  words in any order: operations (read write flush trim, or block;
                  open create close remove stat, or files), range=FROM:TO (bytes of the
                  front's volume; sizes like 1MiB), start=MODELTIME, after=N, count=N, p=F,
                  and what happens: fail (EIO on the share, MEDIUM ERROR on the LUN),
                  delay=D, stall=D, dead (the volume fails every request until restarted)
  fault list      the rules injected, with the requests each matched and chose
  fault clear     remove every rule
`

func runCtl(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("ctl", "[--socket PATH] [--format table|json] status|fail N|replace N|power-loss|fault RULE|fault list|fault clear", stderr)
	socket := fs.String("socket", "", "control socket of the running emulator (default: the only one running)")
	format := fs.String("format", "table", "output format: table or json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *format != "table" && *format != "json" {
		return usagef("--format %q: want table or json", *format)
	}
	req, err := ctlRequest(fs.Args())
	if err != nil {
		return err
	}
	if *socket == "" {
		if *socket, err = onlySocket(); err != nil {
			return err
		}
	}
	var resp serve.Response
	if err := fusefs.CallInto(*socket, req, &resp); err != nil {
		return err
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(resp); err != nil {
			return err
		}
	} else if resp.OK {
		printStatus(stdout, req, resp)
	}
	if !resp.OK {
		return errors.New(resp.Error)
	}
	return nil
}

// ctlRequest parses the command words.
func ctlRequest(words []string) (fusefs.ControlRequest, error) {
	var req fusefs.ControlRequest
	if len(words) == 0 {
		return req, usagef("want a command: status, fail N, replace N, power-loss or fault RULE|list|clear")
	}
	req.Cmd = words[0]
	switch req.Cmd {
	case "status", "power-loss":
		if len(words) != 1 {
			return req, usagef("%s takes no argument", req.Cmd)
		}
	case "fail", "replace":
		if len(words) != 2 {
			return req, usagef("%s takes the member number (from 0)", req.Cmd)
		}
		n, err := strconv.Atoi(words[1])
		if err != nil || n < 0 {
			return req, usagef("%s %q: want a member number (from 0)", req.Cmd, words[1])
		}
		req.Member = n
	case "fault":
		// The rule's words may come as one argument or several.
		req.Fault = strings.Join(words[1:], " ")
		if req.Fault == "" {
			return req, usagef("fault takes a rule (e.g. 'read range=0:1MiB count=3 fail'), list or clear")
		}
		if req.Fault != "list" && req.Fault != "clear" {
			if _, err := fault.Parse(req.Fault); err != nil {
				return req, usageError{err}
			}
		}
	default:
		return req, usagef("unknown command %q (known: status, fail N, replace N, power-loss, fault RULE|list|clear)", req.Cmd)
	}
	return req, nil
}

// onlySocket finds the control socket of the one emulator (mount, nas or
// iscsi) running.
func onlySocket() (string, error) {
	var found []string
	all, _ := filepath.Glob(filepath.Join(stateBase(), "*-*", "ctl.sock"))
	for _, sock := range all {
		// The state directory of an emulator killed before it could
		// clean up: its socket is stale.
		if pid, ok := stateDirPID(filepath.Dir(sock)); ok && !processGone(pid) {
			found = append(found, sock)
		}
	}
	switch len(found) {
	case 0:
		return "", usagef("no running emulator found in %s: give --socket", stateBase())
	case 1:
		return found[0], nil
	}
	return "", usagef("%d emulators are running (%s): give --socket", len(found), joinNames(found))
}

// printStatus prints a response for people.
func printStatus(w io.Writer, req fusefs.ControlRequest, resp serve.Response) {
	if req.Cmd == "power-loss" {
		fmt.Fprintf(w, "power lost: %s of unsynced writes", models.Bytes(resp.LostBytes).Human())
		if resp.Status != nil {
			fmt.Fprintf(w, " and %d namespace changes since the last journal commit", resp.LostChanges)
		}
		fmt.Fprint(w, " undone")
		if resp.LUN != nil {
			fmt.Fprintf(w, ", %d iSCSI sessions dropped", resp.LUN.DroppedSessions)
		}
		fmt.Fprintln(w)
	}
	if req.Cmd == "fault" {
		printFaults(w, resp.Faults)
		return
	}
	var arrays []fusefs.ArrayStatus
	if st := resp.Status; st != nil {
		fmt.Fprintf(w, "share %s (files in %s): %s usable, %s free, model time %.1f s, %d requests in flight, %d namespace changes not yet committed\n",
			st.Mountpoint, st.Backing, models.Bytes(st.Capacity).Human(), models.Bytes(st.Free).Human(), st.ModelTime, st.InFlight, st.PendingChanges)
		if st.LateAnswers > 0 {
			fmt.Fprintf(w, "%d answers later than the model's time, by %.3f s (model time) in all: this host could not keep up with the model (a larger --time-scale slows it down)\n", st.LateAnswers, st.LateSeconds)
		}
		arrays = st.Arrays
	}
	if l := resp.LUN; l != nil {
		fmt.Fprintf(w, "LUN iscsi://%s/%s/0 (bytes in %s): %s, %d sessions, model time %.1f s\n",
			l.Addr, l.IQN, l.Backing, models.Bytes(l.Capacity).Human(), l.Sessions, l.ModelTime)
		if resp.Status == nil {
			arrays = l.Arrays
		}
	}
	if len(arrays) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ARRAY\tSTATE\tFAILED\tREBUILDING\tPROGRESS")
	for _, a := range arrays {
		rb := "-"
		if a.Rebuilding >= 0 {
			rb = strconv.Itoa(a.Rebuilding)
		}
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%.1f%%\n", a.Path, a.State, a.Failed, rb, 100*a.RebuildProgress)
	}
	tw.Flush()
}

// printFaults prints the injected fault rules of every front.
func printFaults(w io.Writer, rules []fusefs.FaultRule) {
	if len(rules) == 0 {
		fmt.Fprintln(w, "no fault injected")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FRONT\tRULE\tMATCHED\tCHOSEN")
	for _, r := range rules {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", r.Front, r.Rule, r.Seen, r.Chosen)
	}
	tw.Flush()
}
