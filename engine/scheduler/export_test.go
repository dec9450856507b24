package scheduler

// SetCrashPoint makes s call f between the steps of every dispatch (crash-injection tests
// end the process there).
func SetCrashPoint(s *Scheduler, f func(stage string)) { s.testCrashPoint = f }
