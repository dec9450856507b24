package worktree

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkRemoteLandingNodes is the landing throughput of several scheduler nodes onto one
// target of one remote against one node (issue 14, "Measured"): each node is a Manager on its
// own data dir and clone, the remote a bare repository over smart HTTP on 127.0.0.1. Each
// iteration lands landingsPerRound attempts (each writing its own file), split evenly among
// the nodes landing at once; a landing whose compare-and-set push lost to another node
// (ErrTargetMoving after its rounds) is landed again, as the scheduler's next pass does.
// Workspaces are made before the timer runs. Reported: landings/s, and the extra landing
// rounds per landing caused by pushes that lost (retries/landing).
//
//	go test -run '^$' -bench RemoteLandingNodes -benchtime 3x ./worktree/
func BenchmarkRemoteLandingNodes(b *testing.B) {
	const landingsPerRound = 12
	for _, nodes := range []int{1, 3} {
		b.Run(fmt.Sprintf("nodes=%d", nodes), func(b *testing.B) {
			rem := newBareRemote(b, map[string]string{"a.txt": "a\n"})
			rem.serveHTTP()
			ms := make([]*Manager, nodes)
			rs := make([]*Repo, nodes)
			for i := range nodes {
				ms[i], rs[i] = remoteManager(b, rem)
			}
			var landed, retries atomic.Int64
			var elapsed time.Duration
			b.StopTimer()
			for round := range b.N {
				wss := make([][]Workspace, nodes)
				for k := range landingsPerRound {
					n := k % nodes
					id := fmt.Sprintf("r%dm%d", round, k)
					ws := prepare(b, ms[n], rs[n], id, 1)
					writeFile(b, ws.Path, id+".txt", id+"\n")
					wss[n] = append(wss[n], ws)
				}
				b.StartTimer()
				start := time.Now()
				var wg sync.WaitGroup
				errs := make(chan error, landingsPerRound)
				for n := range nodes {
					wg.Go(func() {
						for _, ws := range wss[n] {
							for {
								_, err := ms[n].Land(ctxT(b), LandRequest{Repo: rs[n], MissionID: ws.MissionID, Attempt: 1, Workspace: ws})
								if errors.Is(err, ErrTargetMoving) {
									retries.Add(1)
									continue
								}
								if err != nil {
									errs <- err
								}
								landed.Add(1)
								break
							}
						}
					})
				}
				wg.Wait()
				elapsed += time.Since(start)
				b.StopTimer()
				close(errs)
				for err := range errs {
					require.NoError(b, err)
				}
			}
			b.ReportMetric(float64(landed.Load())/elapsed.Seconds(), "landings/s")
			b.ReportMetric(float64(retries.Load())/float64(landed.Load()), "retries/landing")
			for round := range b.N {
				for k := range landingsPerRound {
					require.Equal(b, 1, rem.landedOnce(fmt.Sprintf("r%dm%d", round, k)))
				}
			}
		})
	}
}
