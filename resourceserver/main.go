// Command resourceserver serves Linkslot's MCP endpoint and its
// protected-resource metadata; see resourceserver help and
// resourceserver/internal/cli.
package main

import (
	"context"
	"os"

	"github.com/linkslot/linkslot/resourceserver/internal/cli"
)

func main() {
	os.Exit(cli.Run(context.Background(), os.Args[1:], os.Getenv,
		cli.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Environ: os.Environ()}))
}
