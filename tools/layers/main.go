// Command layers checks the package picture of docs/architecture.md
// against the code: every package of the module sits in one layer of the
// table there, imports only packages of lower layers, and, outside the
// command line, neither reads the process's environment nor writes to its
// standard output. `go test ./tools/layers` runs it; so does
//
//	go run ./tools/layers
//
// from the module's root.
package main

import (
	"fmt"
	"os"
)

func main() {
	problems, err := Check(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "layers: error:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Fprintln(os.Stderr, "layers:", p)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
	fmt.Println("layers: the packages follow docs/architecture.md")
}
