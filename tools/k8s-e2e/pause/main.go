// Command pause is the pod sandbox's process for tools/k8s-e2e/run (the
// role registry.k8s.io/pause plays, with no registry here): it waits for
// SIGTERM or SIGINT. With -image FILE it writes itself as an OCI image
// layout tarball instead, through the release's image writer; the binary
// then sits at release.BinaryPath, the image's entrypoint.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"benchserve/internal/release"
)

func main() {
	image := flag.String("image", "", "write this program's image (linux, the running architecture) to FILE and exit")
	flag.Parse()
	if *image == "" {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
		<-c
		return
	}
	if err := writeImage(*image); err != nil {
		fmt.Fprintf(os.Stderr, "pause: %v\n", err)
		os.Exit(1)
	}
}

func writeImage(path string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		return err
	}
	certs, err := os.ReadFile(release.CACertPath)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	err = release.WriteImage(&buf, release.Image{Binaries: map[string][]byte{runtime.GOARCH: bin}, CACerts: certs,
		Created: time.Unix(0, 0).UTC(), Revision: "pause"})
	if err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
