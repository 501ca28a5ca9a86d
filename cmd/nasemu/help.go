package main

import (
	"fmt"
	"io"
	"strings"
)

// examples holds, for each command, the two or three command lines its
// --help ends with: the common cases, copied into a shell as they are.
var examples = map[string][]string{
	"bench": {
		"nasemu bench --target sim:ds1817-raid5-hdd-smb-1g --suite cdm",
		"nasemu bench --target /mnt/nas --suite cdm --runtime 5s --format json",
		"nasemu bench --target smb://root@127.0.0.1:4450/nas --suite copy --size 256MiB",
	},
	"compare": {
		"nasemu compare --suite cdm sim:ds1817-raid5-hdd-smb-1g sim:ds1817-raid5-ssd-smb-1g",
		"nasemu compare --suite diskspd --out report/ sim:ds1817-raid5-hdd-smb-1g sim:ds1817-raid10-hdd-smb-1g",
		"nasemu compare --suite cdm --size 64GiB --set link.kind=10gbe sim:ds1817-raid5-hdd-smb-1g sim:ds1817-raid5-ssd-smb-1g",
	},
	"sweep": {
		"nasemu sweep testdata/sweeps/example-500.yaml --format parquet --html pareto/ > sweep.parquet",
		"JOB_COMPLETION_INDEX=0 nasemu sweep testdata/sweeps/example-500.yaml --shards 4 --out results/ && nasemu sweep merge --format csv results/",
		"nasemu sweep --emit k8s testdata/sweeps/example-500.yaml --shards 8 --image registry.example/nasemu:v1 | kubectl apply -f -",
	},
	"presets": {
		"nasemu presets",
		"nasemu presets setups",
	},
	"mount": {
		"nasemu mount --setup ds1817-raid5-hdd-smb-1g --backing /srv/share /mnt/nas",
		"nasemu mount --setup my-nas.yaml --backing /srv/share --metrics 127.0.0.1:9108 --ready-file /run/nas.ready /mnt/nas",
	},
	"umount": {
		"nasemu umount /mnt/nas",
		"nasemu umount --lazy /mnt/nas",
	},
	"nas": {
		"NASEMU_SMB_PASSWORD=secret nasemu nas --setup ds1817-raid5-hdd-smb-1g --backing /srv/share --smb 127.0.0.1:4450",
		"nasemu nas --setup ds1817-raid5-hdd-smb-1g --iscsi 127.0.0.1:3260 --lun /srv/lun0.img --lun-size 8GiB",
	},
	"ctl": {
		"nasemu ctl status",
		"nasemu ctl --socket /run/nasemu/ctl.sock fail 1",
		"nasemu ctl fault 'read range=0:1MiB count=3 fail'",
	},
	"iscsi": {
		"nasemu iscsi --setup ds1817-raid5-hdd-iscsi-1g --backing /srv/lun.img",
		"nasemu iscsi --setup free --size 1GiB --backing /srv/lun.img --listen 127.0.0.1:3261",
		"nasemu iscsi --setup ds1817-raid5-hdd-iscsi-1g --backing /srv/lun.img --state-dir /srv/lun.state",
	},
	"validate": {
		"nasemu validate",
		"nasemu validate --format json",
		"nasemu validate --data my-cases.csv",
	},
	"doctor": {
		"nasemu doctor",
		"nasemu doctor --smb 127.0.0.1:4450 --iscsi 127.0.0.1:3260",
	},
	"help": {
		"nasemu help",
		"nasemu help bench",
	},
}

// printExamples ends a command's help with its examples.
func printExamples(w io.Writer, name string) {
	if len(examples[name]) == 0 {
		return
	}
	fmt.Fprintf(w, "\nExamples:\n  %s\n", strings.Join(examples[name], "\n  "))
}

// runHelp is 'nasemu help [COMMAND]': the overview, or what 'COMMAND
// --help' prints.
func runHelp(args []string, stdout, stderr io.Writer) error {
	switch len(args) {
	case 0:
		usage(stdout)
		return nil
	case 1:
	default:
		return usagef("want at most one command, got %d arguments", len(args))
	}
	name := args[0]
	if name == "help" || name == "--help" || name == "-h" {
		fmt.Fprintln(stdout, "Usage: nasemu help [COMMAND]\n\nPrints the commands, or a command's flags (as 'nasemu COMMAND --help').")
		printExamples(stdout, "help")
		return nil
	}
	cmd, ok := commands[name]
	if !ok {
		return usagef("unknown command %q (known: %s)", name, joinNames(commandNames()))
	}
	return cmd.run([]string{"--help"}, stdout, stdout)
}
