package queue

import (
	"os"
	"testing"

	"github.com/mlerl/mlerl/sandbox"
)

func TestMain(m *testing.M) {
	// The sandbox re-executes this binary as its supervisor (landlock tier);
	// the process tests re-execute it as a worker or as a NATS server.
	sandbox.Reexec()
	if os.Getenv(workerEnv) != "" {
		os.Exit(workerMain())
	}
	if os.Getenv(serverEnv) != "" {
		os.Exit(serverMain())
	}
	os.Exit(m.Run())
}
