package steer_test

import (
	"os"
	"testing"

	"github.com/extendeddaemonset/extendeddaemonset/cmd/kubectl-eds/internal/clitest"
)

var env *clitest.Env

func TestMain(m *testing.M) { os.Exit(clitest.Main(m, &env)) }
