package tokenizer

import (
	"os"
	"os/exec"
	"testing"
)

// The package's tests compare our tables with the library's, so they keep
// its copy; TestLibraryTableReleased checks the release in a process of
// its own.
func TestMain(m *testing.M) {
	keepLibrary = os.Getenv("BENCHSERVE_TEST_RELEASE") == ""
	os.Exit(m.Run())
}

// Once o200k_base is loaded, the library's table is gone and ours still
// counts and encodes as before.
func TestLibraryTableReleased(t *testing.T) {
	if os.Getenv("BENCHSERVE_TEST_RELEASE") != "" {
		tok, err := Load("o200k_base")
		if err != nil {
			t.Fatal(err)
		}
		if o200kLibVocab != nil {
			t.Fatal("the library's o200k_base table is still held")
		}
		const text = "Hello, world! Benchmarks measure 1234 tokens."
		want := []int{13225, 11, 2375, 0, 57365, 24369, 9714, 220, 7633, 19, 20290, 13} // the library's Encode
		if got := tok.Encode(text, false); !equalInts(got, want) {
			t.Fatalf("Encode = %v, want %v", got, want)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLibraryTableReleased$")
	cmd.Env = append(os.Environ(), "BENCHSERVE_TEST_RELEASE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
