package chaos

import (
	"fmt"
	"testing"
	"time"

	"github.com/onsi/gomega"
)

// The manager, SIGKILLed at random moments of rollouts with a canary and
// restarted each time, as a crashing pod would be, completes them: a new
// process knows only what the API objects say, and must neither break the
// budget nor create a second pod on a node for what the killed one did.
// A rollout that completes between kills is followed by the next one, so
// that every kill lands in a rollout.
func TestControllerKills(t *testing.T) {
	s := newScenario(t, "kills")
	manager := s.startManager("manager", s.env.kubeconfig, fastLease...)
	leader, _ := s.waitLeader("")
	version := 1
	eds := s.agent(fmt.Sprint("v", version), prof.canary)
	s.waitRolledOut(eds, fmt.Sprint("v", version))

	var lastKill time.Time
	for kill := 1; kill <= prof.kills; kill++ {
		if waiting, err := s.rolledOut(s.ctx, eds, fmt.Sprint("v", version)); err == nil && waiting == "" {
			version++
			s.setVersion(eds, fmt.Sprint("v", version))
		}
		uptime := time.Duration(s.rng.Int64N(int64(prof.maxUptime)))
		s.sleep(uptime)
		lastKill = time.Now()
		s.g.Expect(manager.Kill()).To(gomega.Succeed())
		s.result.Kills++
		t.Logf("kill %d of %d, %s after the manager took the lease, during the rollout of v%d", kill, prof.kills, uptime.Round(time.Millisecond), version)
		s.g.Expect(manager.Start(s.ctx)).To(gomega.Succeed())
		leader, _ = s.waitLeader(leader)
	}
	s.waitRolledOut(eds, fmt.Sprint("v", version))
	s.result.Converge = time.Since(lastKill)
	s.verify()
}
