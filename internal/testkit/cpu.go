package testkit

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time this process has used, user and system (0
// where getrusage fails). Benchmarks report it per operation: on a shared
// machine it drifts less than a rate does.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
