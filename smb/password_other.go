//go:build !linux

package smb

import (
	"errors"
	"io"
	"os"
)

// isTerminal: prompting is only supported on Linux; elsewhere use
// PasswordEnv.
func isTerminal(*os.File) bool { return false }

func promptPassword(*os.File, io.Writer, string) (string, error) {
	return "", errors.New("password prompt not supported on this system")
}
