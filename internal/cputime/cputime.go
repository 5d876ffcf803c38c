// Package cputime reads the process's own CPU time, user plus system, on
// every system the binary builds for.
package cputime
