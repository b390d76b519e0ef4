package admincli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/linkslot/linkslot/internal/catalogfile"
	"github.com/linkslot/linkslot/internal/cmdline"
	"github.com/linkslot/linkslot/internal/textout"
)

func catalogCmd(env Env) *cobra.Command {
	return group("catalog", "Import and export the businesses that can be booked (see internal/catalogfile)",
		catalogImportCmd(env), catalogExportCmd(env), catalogFeedURLCmd(env))
}

func catalogImportCmd(env Env) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "import FILE [--format yaml|json]",
		Short: `Import a catalog file, validated whole (FILE "-" reads standard input); nothing is written on any problem; progress on standard error`,
		Args:  cmdline.ExactArgs(1, "one file (or - for standard input)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := args[0]
			var data []byte
			var err error
			if file == "-" {
				data, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), catalogfile.MaxFileBytes+1))
			} else {
				data, err = readLimited(file)
			}
			if err != nil {
				return fmt.Errorf("read catalog: %w", err)
			}
			if format == "" {
				format = strings.TrimPrefix(filepath.Ext(file), ".")
				if catalogfile.NormalizeFormat(format) == "" {
					format = "yaml" // JSON is YAML too, near enough; paths still point at the problem
				}
			}
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			res, err := svc.ImportCatalogProgress(cmd.Context(), actor, data, format, progress(cmd.ErrOrStderr()))
			if err != nil {
				return err
			}
			// Warnings go to standard error, one a line with its path:
			// the import is done, but these businesses will lack slots.
			for _, w := range res.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s\n", textout.Visible(fmt.Sprint(w)))
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Imported %d business(es): %s\n", len(res.Imported),
				textout.Visible(strings.Join(res.Imported, ", ")))
			if err == nil && len(res.Warnings) > 0 {
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%d warning(s) above: the import is done, but those staff members or services are never offered a slot\n", len(res.Warnings))
			}
			return err
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "yaml or json (default: from the file name)")
	_ = cmd.RegisterFlagCompletionFunc("format", cmdline.Values("yaml", "json"))
	return cmd
}

// readLimited reads a catalog file, one byte past catalogfile.MaxFileBytes
// at most: the import refuses it then, naming the limit.
func readLimited(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, catalogfile.MaxFileBytes+1))
}

// progressEvery is how often a large import reports on standard error.
const progressEvery = 100

// progress reports a large import's writes on w, one line every
// progressEvery businesses and one at the end; an import of fewer
// businesses is quiet.
func progress(w io.Writer) func(done, total int) {
	return func(done, total int) {
		if total >= progressEvery && (done%progressEvery == 0 || done == total) {
			fmt.Fprintf(w, "imported %d/%d businesses…\n", done, total)
		}
	}
}

func catalogExportCmd(env Env) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "export [--format yaml|json]",
		Short: "Print the whole catalog in the import format",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if jsonOut(cmd) {
				format = "json"
			}
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			data, err := svc.ExportCatalog(cmd.Context(), actor, format)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(data)
			return err
		},
	}
	cmd.Flags().StringVar(&format, "format", "yaml", "yaml or json")
	_ = cmd.RegisterFlagCompletionFunc("format", cmdline.Values("yaml", "json"))
	return cmd
}

func catalogFeedURLCmd(env Env) *cobra.Command {
	var business, staff string
	var replace bool
	cmd := &cobra.Command{
		Use:   "feed-url --business REF [--staff REF] [--new]",
		Short: "Print the private calendar feed URL of a business or one staff member (--new replaces it; the old URL stops working)",
		Args:  cmdline.MaxArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if business == "" {
				return cmdline.Usagef("%s: --business is required", cmd.CommandPath())
			}
			svc, err := env.Service(cmd.Context())
			if err != nil {
				return err
			}
			u, err := svc.FeedURL(cmd.Context(), actor, business, staff, replace)
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(cmd.OutOrStdout(), map[string]string{"url": u})
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), u)
			return err
		},
	}
	cmd.Flags().StringVar(&business, "business", "", "the business reference")
	cmd.Flags().StringVar(&staff, "staff", "", "only this staff member's bookings")
	cmd.Flags().BoolVar(&replace, "new", false, "replace the feed's URL (the old one stops working)")
	return cmd
}
