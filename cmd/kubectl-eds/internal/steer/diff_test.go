package steer_test

import (
	"fmt"
	"testing"
)

func TestDiffShowsWhatTheCanaryChanges(t *testing.T) {
	t.Parallel()
	s, canary := runningCanary(t)
	active := s.Get(s.G, name).Status.ActiveReplicaSet

	expectOK(s, run(s, "diff", name), fmt.Sprintf(`--- active %s (revision 1)
+++ canary %s (revision 2)
@@ -3,7 +3,7 @@
     app: agent
 spec:
   containers:
-  - image: agent:v1
+  - image: agent:v2
     name: agent
     resources: {}
   nodeSelector:`, active, canary.ReplicaSet))
}

func TestDiffWithoutACanary(t *testing.T) {
	t.Parallel()
	s := rolledOut(t, 1, "agent:v1")
	active := s.Get(s.G, name).Status.ActiveReplicaSet

	expectOK(s, run(s, "diff", name),
		fmt.Sprintf("no difference: %s runs the template of its spec, revision 1 (%s)", ref(s), active))

}
