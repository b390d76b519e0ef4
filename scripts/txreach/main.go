// Command txreach counts what each transaction can reach: the methods of
// every narrow transaction interface (embedded interfaces included), widest
// first, beside store.Store's. docs/design.md "Transactions" quotes it.
//
//	go run ./scripts/txreach            # the interfaces below
//	go run ./scripts/txreach -v         # and their methods
//	go run ./scripts/txreach PKG.Name…  # others, by import path
package main

import (
	"flag"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

const mod = "github.com/linkslot/linkslot/"

// interfaces are the transaction interfaces, and store.Store and store.Tx
// to compare them with.
var interfaces = []string{
	"internal/store.Store",
	"internal/store.Tx",
	"internal/store.Tokens",
	"internal/admin.Tx",
	"internal/business.Tx",
	"internal/mutation.Tx",
	"internal/mutation.NotifyTx",
	"internal/notify.Tx",
	"internal/notify.Queue",
	"internal/idempotency.Tx",
	"internal/booking.Tx",
	"internal/identity.Tx",
	"internal/identity.ApproveTx",
	"internal/identity.MailTx",
	"internal/dcr.Tx",
	"internal/passkey.Tx",
	"internal/callbacks.Tx",
	"internal/app.WaitlistTx",
	"internal/mutation.SpanTx",
	"authserver/internal/endpoint.ApprovalTx",
}

type row struct {
	name    string
	methods []string
}

func main() {
	verbose := flag.Bool("v", false, "list the methods too")
	flag.Parse()
	names := flag.Args()
	if len(names) == 0 {
		for _, n := range interfaces {
			names = append(names, mod+n)
		}
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", exports(names))
	var rows []row
	for _, n := range names {
		i := strings.LastIndex(n, ".")
		if i < 0 {
			fail("%s: want an import path, a dot and a type name", n)
		}
		pkg, err := imp.Import(n[:i])
		if err != nil {
			fail("%s: %v", n, err)
		}
		obj := pkg.Scope().Lookup(n[i+1:])
		if obj == nil {
			fail("%s: no such type", n)
		}
		it, ok := obj.Type().Underlying().(*types.Interface)
		if !ok {
			fail("%s: not an interface", n)
		}
		r := row{name: strings.TrimPrefix(n, mod)}
		for m := range it.Methods() {
			r.methods = append(r.methods, m.Name())
		}
		sort.Strings(r.methods)
		rows = append(rows, r)
	}
	sort.SliceStable(rows, func(a, b int) bool { return len(rows[a].methods) > len(rows[b].methods) })
	for _, r := range rows {
		fmt.Printf("%3d  %s\n", len(r.methods), r.name)
		if *verbose {
			fmt.Printf("     %s\n", strings.Join(r.methods, " "))
		}
	}
}

// exports finds the compiler's export data of the named types' packages
// and of everything they import (go list -export), for the importer.
func exports(names []string) importer.Lookup {
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}
	for _, n := range names {
		if i := strings.LastIndex(n, "."); i > 0 {
			args = append(args, n[:i])
		}
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		fail("go list: %v", err)
	}
	files := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if path, file, ok := strings.Cut(l, "\t"); ok && file != "" {
			files[path] = file
		}
	}
	return func(path string) (io.ReadCloser, error) {
		f, ok := files[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	}
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "txreach: "+format+"\n", a...)
	os.Exit(1)
}
