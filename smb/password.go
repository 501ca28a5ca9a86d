package smb

import (
	"errors"
	"fmt"
	"os"

	"github.com/nasemu/nasemu/bench"
)

// PasswordEnv is the environment variable that holds the password of an
// SMB target whose address carries none.
const PasswordEnv = "NASEMU_SMB_PASSWORD"

// ErrNoPassword: the address has no password, PasswordEnv is unset and
// stdin is not a terminal to ask on.
var ErrNoPassword = errors.New("no SMB password")

// PasswordSource supplies the password of a target whose address has
// none; redacted is the address without password, for a prompt.
type PasswordSource func(redacted string) (string, error)

// DefaultPassword takes the password from PasswordEnv, else asks on the
// terminal (echo off) when stdin is one. The password in the address
// itself is meant for throwaway test servers only: it shows in the
// process list and the shell's history.
func DefaultPassword(redacted string) (string, error) {
	if pw, ok := os.LookupEnv(PasswordEnv); ok {
		return pw, nil
	}
	if isTerminal(os.Stdin) {
		return promptPassword(os.Stdin, os.Stderr, fmt.Sprintf("Password for %s: ", redacted))
	}
	return "", fmt.Errorf("%w: %w for %s: set %s (or run on a terminal to be asked)", bench.ErrTarget, ErrNoPassword, redacted, PasswordEnv)
}

// resolvePassword fills c.Password from src unless the address had one.
func resolvePassword(c *Config, src PasswordSource) error {
	if c.HasPassword {
		return nil
	}
	if src == nil {
		src = DefaultPassword
	}
	pw, err := src(c.Redacted())
	if err != nil {
		return err
	}
	c.Password, c.HasPassword = pw, true
	return nil
}
