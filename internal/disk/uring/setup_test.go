package uring

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestSetupErrorClassification(t *testing.T) {
	tests := []struct {
		name            string
		errno           unix.Errno
		wantUnsupported bool
	}{
		{"ENOSYS old kernel or filtered", unix.ENOSYS, true},
		{"EPERM io_uring_disabled or seccomp", unix.EPERM, true},
		{"EACCES security module", unix.EACCES, true},
		{"EINVAL bad entries", unix.EINVAL, false},
		{"ENOMEM memlock", unix.ENOMEM, false},
		{"EFAULT other", unix.EFAULT, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := setupError(8, tt.errno)
			if got := errors.Is(err, ErrUnsupported); got != tt.wantUnsupported {
				t.Errorf("errors.Is(%v, ErrUnsupported) = %v, want %v", err, got, tt.wantUnsupported)
			}
			if !errors.Is(err, tt.errno) {
				t.Errorf("error %v does not wrap %v", err, tt.errno)
			}
			if !strings.Contains(err.Error(), tt.errno.Error()) {
				t.Errorf("error %q does not name the errno %q", err, tt.errno.Error())
			}
		})
	}
}

func TestNewRejectsInvalidEntries(t *testing.T) {
	requireUring(t)
	_, err := New(0)
	if err == nil || errors.Is(err, ErrUnsupported) || !errors.Is(err, unix.EINVAL) {
		t.Fatalf("New(0) = %v, want EINVAL that is not ErrUnsupported", err)
	}
}
