package outcome

import (
	"errors"
)

// stallingError is a spec the schema let through but the controller cannot
// use: retrying cannot help, only a change of the spec. It stalls the object
// (Stalled, reason InvalidSpec) instead of being retried with backoff.
type stallingError struct {
	err error
}

func (e *stallingError) Error() string { return e.err.Error() }
func (e *stallingError) Unwrap() error { return e.err }

// Stalling marks err as one only a spec change fixes.
func Stalling(err error) error {
	if err == nil {
		return nil
	}
	return &stallingError{err: err}
}

// IsStalling reports whether err, or an error it wraps, is a stalling one.
func IsStalling(err error) bool {
	var s *stallingError
	return errors.As(err, &s)
}
