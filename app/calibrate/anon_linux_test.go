package calibrate

import (
	"os"
	"os/exec"
	"testing"
)

// The reader reads a live process's anonymous memory, and an exited
// one's as nothing: its open file stays that process's, whatever the pid
// becomes.
func TestAnonReader(t *testing.T) {
	read, closeFn := anonReader(os.Getpid())
	if read == nil {
		t.Fatal("no reader for this process")
	}
	kb, ok := read()
	closeFn()
	if !ok || kb <= 0 {
		t.Errorf("this process: RssAnon %d kB, %v", kb, ok)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read, closeFn = anonReader(cmd.Process.Pid)
	if read == nil {
		t.Fatal("no reader for the child")
	}
	defer closeFn()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if kb, ok := read(); ok {
		t.Errorf("an exited child: RssAnon %d kB, want none", kb)
	}
}
