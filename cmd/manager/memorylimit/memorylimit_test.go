package memorylimit

import (
	"errors"
	"os"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

const mib = 1 << 20

// unsetEnv removes name from the environment for the test, as t.Setenv
// would set it, restoring it afterwards.
func unsetEnv(t *testing.T, name string) {
	t.Helper()
	t.Setenv(name, "")
	if err := os.Unsetenv(name); err != nil {
		t.Fatal(err)
	}
}

// keepRuntimeLimit restores the process's soft limit after a test sets it.
func keepRuntimeLimit(t *testing.T) int64 {
	t.Helper()
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	return before
}

func TestSetFollowsTheContainerUnlessGOMEMLIMITIsSet(t *testing.T) {
	errUnreadable := errors.New("memory.max: permission denied")
	for _, tc := range []struct {
		name      string
		env       string // GOMEMLIMIT, unset when empty
		container memlimit.Provider
		ratio     float64
		want      Limit
		// set is the runtime's soft limit afterwards; 0 means unchanged.
		set     int64
		wantErr string
		// wraps is the container reader's error, which Set's must carry.
		wraps error
	}{
		{
			name: "a part of the container's limit", container: memlimit.Limit(150 * mib), ratio: DefaultRatio,
			want: Limit{Source: FromContainer, Bytes: 105 * mib, Container: 150 * mib}, set: 105 * mib,
		},
		{
			name: "all of it when asked", container: memlimit.Limit(512 * mib), ratio: 1,
			want: Limit{Source: FromContainer, Bytes: 512 * mib, Container: 512 * mib}, set: 512 * mib,
		},
		{
			name: "the user's GOMEMLIMIT wins", env: "200MiB", container: memlimit.Limit(150 * mib), ratio: DefaultRatio,
			want: Limit{Source: FromEnvironment},
		},
		{
			name: "no container limit, no change", container: func() (uint64, error) { return 0, memlimit.ErrNoLimit }, ratio: DefaultRatio,
			want: Limit{Source: NoLimit},
		},
		{
			name: "an unreadable limit is said and changes nothing", container: func() (uint64, error) { return 0, errUnreadable }, ratio: DefaultRatio,
			want: Limit{Source: NoLimit}, wantErr: "reading the container's memory limit", wraps: errUnreadable,
		},
		{
			name: "a ratio above 1 is refused", container: memlimit.Limit(150 * mib), ratio: 1.5,
			wantErr: "memory limit ratio 1.5: want the part of the container's memory limit",
		},
		{
			name: "a ratio of 0 is refused", container: memlimit.Limit(150 * mib), ratio: 0,
			wantErr: "memory limit ratio 0:",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := keepRuntimeLimit(t)
			unsetEnv(t, "AUTOMEMLIMIT")
			if tc.env == "" {
				unsetEnv(t, envGOMEMLIMIT)
			} else {
				t.Setenv(envGOMEMLIMIT, tc.env)
			}
			got, err := Set(tc.ratio, tc.container)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
			if tc.wraps != nil && !errors.Is(err, tc.wraps) {
				t.Errorf("error %v does not wrap the reader's %v", err, tc.wraps)
			}
			want, set := tc.want, tc.set
			if set == 0 {
				set = before
			}
			if want.Source != "" && want.Bytes == 0 {
				want.Bytes = before
			}
			if got != want {
				t.Errorf("Set = %+v, want %+v", got, want)
			}
			if now := debug.SetMemoryLimit(-1); now != set {
				t.Errorf("the runtime's soft limit is %d, want %d", now, set)
			}
		})
	}
}
