// Command authserver is Linkslot's OAuth 2.1 / OpenID Connect authorization
// server and its administration command line; see authserver help.
package main

import (
	"context"
	"os"

	"github.com/linkslot/linkslot/authserver/internal/cli"
)

func main() {
	os.Exit(cli.Run(context.Background(), os.Args[1:], os.Getenv,
		cli.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ()}))
}
