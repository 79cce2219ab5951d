package certs_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fedtopic/fedtopic/fed/certs"
)

// Example makes the certificates of a three-party development federation,
// as fedtopic certs --out DIR --parties p1,p2,p3 does.
func Example() {
	dir, _ := os.MkdirTemp("", "certs")
	defer os.RemoveAll(dir)
	if err := certs.WriteDir(dir, certs.Options{Parties: []string{"p1", "p2", "p3"}}); err != nil {
		fmt.Println(err)
		return
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.pem"))
	for _, f := range files {
		fmt.Println(filepath.Base(f))
	}
	// Output:
	// ca.pem
	// coordinator-key.pem
	// coordinator.pem
	// p1-key.pem
	// p1.pem
	// p2-key.pem
	// p2.pem
	// p3-key.pem
	// p3.pem
}
