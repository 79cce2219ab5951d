package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/fedtopic/fedtopic"

// pkgInfo is what the rules need to know of one package directory.
type pkgInfo struct {
	dir     string          // slash path relative to the module root
	imports map[string]bool // imports of non-test files
	hasDoc  bool            // doc.go exists with a package comment
}

func loadPackages(t *testing.T) []pkgInfo {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []pkgInfo
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
			return filepath.SkipDir
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info := pkgInfo{dir: filepath.ToSlash(rel), imports: map[string]bool{}}
		var goFiles int
		fset := token.NewFileSet()
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || !strings.HasSuffix(n, ".go") {
				continue
			}
			goFiles++
			f, err := parser.ParseFile(fset, filepath.Join(p, n), nil, parser.ImportsOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			if n == "doc.go" && f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
				info.hasDoc = true
			}
			if strings.HasSuffix(n, "_test.go") {
				continue
			}
			for _, imp := range f.Imports {
				s, _ := strconv.Unquote(imp.Path.Value)
				info.imports[s] = true
			}
		}
		if goFiles > 0 {
			pkgs = append(pkgs, info)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func TestEveryPackageHasDoc(t *testing.T) {
	for _, p := range loadPackages(t) {
		if !p.hasDoc {
			t.Errorf("package %s has no doc.go with a package comment", p.dir)
		}
	}
}

// within reports whether dir is pkg or below it.
func within(dir, pkg string) bool { return dir == pkg || strings.HasPrefix(dir, pkg+"/") }

func TestImportRules(t *testing.T) {
	pure := []string{"lda", "ftm", "pctd", "fedlda", "fednmf"} // algorithms: no I/O, clock or network
	forbiddenPure := []string{"net", "os", "time", "google.golang.org/grpc"}
	bottom := []string{"corpus", "vocab", "topic", "privacy"}
	for _, p := range loadPackages(t) {
		for imp := range p.imports {
			if !strings.HasPrefix(imp, module+"/") {
				for _, pkg := range pure {
					if within(p.dir, pkg) && !within(p.dir, pkg+"/internal") {
						for _, f := range forbiddenPure {
							if imp == f || strings.HasPrefix(imp, f+"/") {
								t.Errorf("%s imports %s: algorithm packages do no I/O, clock or network", p.dir, imp)
							}
						}
					}
				}
				if p.dir == "fed" && (imp == "net" || strings.HasPrefix(imp, "net/") || strings.HasPrefix(imp, "google.golang.org/grpc")) {
					t.Errorf("fed imports %s: the protocol core knows no network; transports live in fed/inproc and fed/fedgrpc", imp)
				}
				continue
			}
			target := strings.TrimPrefix(imp, module+"/")
			if !within(p.dir, "cmd") && (within(target, "cmd") || (within(target, "sim") && !within(p.dir, "sim"))) {
				t.Errorf("%s imports %s: nothing below cmd imports cmd or sim", p.dir, target)
			}
			if (within(p.dir, "lda") && within(target, "fed")) || (within(p.dir, "fed") && within(target, "lda")) {
				t.Errorf("%s imports %s: lda and fed are independent", p.dir, target)
			}
			for _, b := range bottom {
				if !within(p.dir, b) {
					continue
				}
				up := []string{"lda", "fed", "sim", "eval", "ftm", "pctd", "fedlda", "fednmf"}
				if slices.ContainsFunc(up, func(u string) bool { return within(target, u) }) {
					t.Errorf("%s imports %s: %s is at the bottom of the layout and imports no higher layer", p.dir, target, path.Base(b))
				}
			}
		}
	}
}
